"""Aggregation of the entity graph after LeanRAG: a hierarchy of entity clusters, each a summary
node, with relations between the clusters of one level.

Clusters are found with networkx's Louvain method (``louvain_communities``, fixed seed): it is
maintained, in networkx (a core dependency already, where igraph's Leiden would add a compiled
one) and deterministic for a given graph when nodes and edges are added in sorted order, so the
aggregation is a function of the entity graph alone: recomputed after inserts and deletes it
equals the aggregation of the index rebuilt from the same documents. Level 1 clusters entities
by their relations; each further level clusters the nodes left on top (clusters, and entities no
community merged) by the relations between their entities, until a level merges nothing. An
entity without relations belongs to no cluster. Relations are kept between clusters whose
nodes were on top together at a level, with that level. A cluster's id names its level and its smallest entity id, so ids do not depend on the
order in which communities are found.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import networkx as nx

__all__ = ["Aggregation", "Cluster", "ClusterRelation", "aggregate"]

LOUVAIN_SEED = 0
MAX_LEVELS = 4


@dataclass(frozen=True)
class Cluster:
    """A summary node: ``members`` are one level below (entity ids at level 1), ``entities`` every
    entity under it, ``hubs`` its entities by relations inside the cluster, most first."""

    id: str
    level: int
    members: tuple[str, ...]
    entities: tuple[str, ...]
    hubs: tuple[str, ...]


@dataclass(frozen=True)
class ClusterRelation:
    """Clusters of one level joined by ``strength`` entity relations (``examples``: a few of them)."""

    source: str
    target: str
    level: int
    strength: int
    examples: tuple[tuple[str, str], ...]


@dataclass
class Aggregation:
    """The cluster hierarchy: clusters by id, each node's parent cluster, relations per level."""

    clusters: dict[str, Cluster] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)
    relations: list[ClusterRelation] = field(default_factory=list)

    def ancestors(self, node: str) -> list[str]:
        """The clusters above ``node`` (an entity or a cluster id), nearest first."""
        out = []
        while node in self.parent:
            node = self.parent[node]
            out.append(node)
        return out

    def lowest_common_ancestor(self, a: str, b: str) -> str | None:
        """The lowest cluster holding both ``a`` and ``b``, or None when no cluster does."""
        above_a = self.ancestors(a)
        above_b = set(self.ancestors(b))
        return next((c for c in above_a if c in above_b), None)

    def to_dict(self) -> dict:
        return {"clusters": {c: vars(k) for c, k in sorted(self.clusters.items())},
                "relations": [vars(r) for r in self.relations]}


def _cluster_id(level: int, entities: Iterable[str]) -> str:
    return f"L{level}:{min(entities)}"


def _communities(graph: nx.Graph) -> list[set[str]]:
    return [set(c) for c in nx.community.louvain_communities(graph, weight="weight", seed=LOUVAIN_SEED)]


def aggregate(entity_ids: Iterable[str], relations: Iterable[tuple[str, str]], *,
              max_levels: int = MAX_LEVELS, hubs_kept: int = 5) -> Aggregation:
    """The cluster hierarchy of the graph whose entities are ``entity_ids`` and whose entity-entity
    relations are ``relations`` (pairs, either order; repeats count once)."""
    known = set(entity_ids)
    edges = sorted({(min(u, v), max(u, v)) for u, v in relations if u != v and u in known and v in known})
    base = nx.Graph()
    base.add_nodes_from(sorted({n for e in edges for n in e}))
    base.add_edges_from(edges, weight=1)
    result = Aggregation()
    owner = {n: n for n in base}  # entity -> its node at the current level (itself, or its top cluster)
    below: dict[str, tuple[str, ...]] = {n: (n,) for n in base}  # node of the current level -> its entities
    graph = base
    for level in range(1, max_levels + 1):
        merged = [c for c in (_communities(graph) if graph.number_of_edges() else []) if len(c) > 1]
        if not merged:
            break  # a level that merges nothing ends the hierarchy
        for members in merged:  # a node no community merged stays as it is, for the next level
            entities = tuple(sorted(e for m in members for e in below[m]))
            cid = _cluster_id(level, entities)
            inside = Counter(n for u, v in base.subgraph(entities).edges for n in (u, v))
            hubs = tuple(sorted(entities, key=lambda e: (-inside[e], e))[:hubs_kept])
            result.clusters[cid] = Cluster(cid, level, tuple(sorted(members)), entities, hubs)
            for member in members:
                result.parent[member] = cid
                del below[member]
            below[cid] = entities
            owner.update({e: cid for e in entities})
        between: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for u, v in edges:
            a, b = owner[u], owner[v]
            if a != b:
                between.setdefault((min(a, b), max(a, b)), []).append((u, v))
        result.relations.extend(ClusterRelation(a, b, level, len(pairs), tuple(pairs[:3]))
                                for (a, b), pairs in sorted(between.items())
                                if a in result.clusters and b in result.clusters  # each pair once:
                                and level in (result.clusters[a].level, result.clusters[b].level))
        graph = nx.Graph()
        graph.add_nodes_from(sorted(below))
        graph.add_weighted_edges_from((a, b, len(pairs)) for (a, b), pairs in sorted(between.items()))
    return result
