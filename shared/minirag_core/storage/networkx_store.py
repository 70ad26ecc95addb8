"""The core's graph store: one networkx graph, persisted as node-link JSON and a JSONL log (never pickle)."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

import networkx as nx

from minirag_core.graph.heterogeneous import CHUNK, ENTITY, RELATION, citation_fields
from minirag_core.graph.arrays import ChunkLinks, RelationArrays, bounded_expansion
from minirag_core.graph.records import WEIGHT_SCALE
from minirag_core.storage.base import rank_type_pool
from minirag_core.storage.graph_log import Change, GraphFiles


class NetworkXGraphStore:
    """Holds the heterogeneous graph in memory; implements ``GraphStore`` (its working graph
    is the whole graph), the embedded default.

    Persisted as a node-link JSON snapshot plus a log of each write's changes
    (``graph_log``): ``save(change)`` costs what the write changed, ``save()`` rewrites all.
    """

    holds_whole_graph = True  # working_graph() is the whole graph
    MAX_NEIGHBORS = 40  # new relations one node adds to an ``entity_subgraph`` expansion

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.graph = nx.Graph()
        self._strongest: dict[str, list[str]] = {}
        self._relation_sets: dict[str, frozenset[str]] = {}
        self._chunk_links: dict[str, dict[str, str]] | None = None
        self._subject_index: dict[str, list[str]] | None = None
        self._mentioned: dict[str, list[str]] = {}  # chunk -> the entities it mentions, as read
        self._arrays: RelationArrays | None = None
        self._link_arrays: dict[bool, ChunkLinks] = {}  # every mention (False), subject links (True)
        self._files = GraphFiles(path) if path is not None else None
        self._stamp: tuple[Any, ...] | None = None
        self.reload_if_changed()

    def reload_if_changed(self) -> bool:
        """Catch up with what another process saved since this store read or wrote the files
        (only the new log lines when the snapshot is unchanged)."""
        if self._files is None:
            return False
        stamp = self._files.stamp()
        if stamp is None or stamp == self._stamp:
            return False
        with self.lock:
            self.graph = self._files.load(self.graph if self._stamp is not None else None)
            self._stamp = stamp  # taken before reading: a write landing meanwhile shows next time
        self.changed()
        return True

    def changed(self) -> None:
        """Forget what was derived from the graph; the index calls this after every write."""
        with self.lock:
            self._strongest = {}
            self._relation_sets = {}
            self._chunk_links = None
            self._subject_index = None
            self._mentioned = {}
            self._arrays = None
            self._link_arrays = {}

    def save(self, change: Change | None = None) -> None:
        """Persist the graph: with ``change`` (every node, edge and registry entry the write
        touched; a chunk node brings its mention edges) only that is logged, else all of it."""
        self.changed()
        if self._files is None:
            return
        with self.lock:
            if change is None:
                self._files.write_snapshot(self.graph)
            else:
                self._files.append(self.graph, change)
            self._stamp = self._files.stamp()

    def settle(self) -> None:
        """Fold a log grown past a share of the snapshot into a new snapshot (``graph_log.SETTLE_RATIO``)."""
        if self._files is None:
            return
        with self.lock:
            if self._files.settle(self.graph):
                self._stamp = self._files.stamp()

    def documents(self) -> dict[str, dict[str, Any]]:
        return self.graph.graph.setdefault("documents", {})

    def working_graph(self, chunk_ids: Iterable[str] = (), entity_ids: Iterable[str] = (),
                      edges: Iterable[tuple[str, str]] = ()) -> nx.Graph:
        return self.graph

    # -- GraphView ---------------------------------------------------------------------
    def entity(self, entity_id: str) -> dict[str, Any] | None:
        with self.lock:
            if not self.graph.has_node(entity_id) or self.graph.nodes[entity_id].get("kind") != ENTITY:
                return None
            node = self.graph.nodes[entity_id]
            return {**{k: node[k] for k in ("name", "type", "description")}, "source_chunks": sorted(node["sources"])}

    def has_entity(self, entity_id: str) -> bool:
        """Whether ``entity_id`` is an entity node (``entity`` without reading its record)."""
        node = self.graph._node.get(entity_id)
        return node is not None and node.get("kind") == ENTITY

    def _strongest_relations(self, node: str) -> list[str]:
        """A node's relation neighbours, strongest first (cached until the next write)."""
        found = self._strongest.get(node)
        if found is None:
            adjacency = self.graph._adj[node]
            found = sorted((n for n, e in adjacency.items() if e.get("kind") == RELATION),
                           key=lambda n: (-adjacency[n]["weight"], n))
            self._strongest[node] = found
        return found

    def _relation_set(self, node: str) -> frozenset[str]:
        """A node's relation neighbours as a set (cached until the next write)."""
        found = self._relation_sets.get(node)
        if found is None:
            found = self._relation_sets[node] = frozenset(self._strongest_relations(node))
        return found

    def entity_subgraph(self, seeds: Iterable[str], hops: int, max_nodes: int,
                        max_neighbors: int | None = None) -> nx.Graph:
        """Breadth-first from the seeds over relation edges; each node contributes at most
        its ``max_neighbors`` strongest new relations, so a hub cannot pull in the whole graph."""
        max_neighbors = self.MAX_NEIGHBORS if max_neighbors is None else max_neighbors
        with self.lock:
            g = self.graph
            start = [s for s in dict.fromkeys(seeds) if g.has_node(s) and g.nodes[s].get("kind") == ENTITY]
            depth = bounded_expansion(start, lambda node, _: self._strongest_relations(node), hops, max_nodes,
                                      max_neighbors)
            return self._induced(depth)

    def relation_arrays(self) -> RelationArrays:
        """The relation edges as arrays, for mini mode's graph work (built once per graph version)."""
        with self.lock:
            if self._arrays is None:
                self._arrays = RelationArrays.from_graph(self.graph, self.MAX_NEIGHBORS)
            return self._arrays

    def _induced(self, depth: dict[str, int]) -> nx.Graph:
        """The relation edges among ``depth``'s nodes, as a new graph whose dicts are filled
        directly (``add_edges_from`` costs several times more for the same graph)."""
        g, raw = self.graph, self.graph._adj  # plain dict-of-dicts: faster than the AtlasView
        sub = nx.Graph()
        sub_nodes, sub_adj = sub._node, sub._adj
        for n, d in depth.items():
            attrs = g._node[n]
            sub_nodes[n] = {"name": attrs["name"], "type": attrs["type"], "hop": d}
            sub_adj[n] = {}
        # Each edge is found from an endpoint whose relation list is shorter than the subgraph;
        # edges between two hubs (longer lists) are looked up pairwise.
        hubs = []
        members = set(depth)
        for u in depth:
            related = self._relation_set(u)
            if len(related) > len(depth):
                hubs.append(u)
                continue
            near, found = raw[u], sub_adj[u]
            for v in related & members:  # intersected in C, over the smaller set
                if v not in found:
                    e = near[v]
                    found[v] = sub_adj[v][u] = {"weight": e["weight"], "description": e["description"],
                                                "keywords": e["keywords"]}
        for i, u in enumerate(hubs):
            adjacency = raw[u]
            for v in hubs[i + 1:]:
                e = adjacency.get(v)
                if e is not None and e.get("kind") == RELATION:
                    sub_adj[u][v] = sub_adj[v][u] = {"weight": e["weight"], "description": e["description"],
                                                     "keywords": e["keywords"]}
        return sub

    def _links_index(self) -> dict[str, dict[str, str]]:
        """Every mention at once, from the chunks' side (a hub's relations are never scanned);
        the caller holds the lock."""
        if self._chunk_links is None:
            index: dict[str, dict[str, str]] = {}
            raw = self.graph._adj
            for chunk_id in sorted(n for n, kind in self.graph.nodes(data="kind") if kind == CHUNK):
                for node, e in raw[chunk_id].items():
                    index.setdefault(node, {})[chunk_id] = e.get("description", "")
            self._chunk_links = index
        return self._chunk_links

    def link_arrays(self, subjects: bool = False) -> ChunkLinks:
        """Every entity-chunk link (or, with ``subjects``, every link from an entity to a chunk
        about it) as arrays, for mini mode's per-chunk scoring (built once per graph version)."""
        with self.lock:
            if not self._link_arrays:  # both at once, on one listing of the chunks: a later query lists nothing
                position, chunk_ids = self.relation_arrays().position, self.chunk_ids()
                for kind, index in ((False, self._links_index()), (True, self._subjects())):
                    self._link_arrays[kind] = ChunkLinks(position, chunk_ids,
                                                         ((e, c) for e, chunks in index.items() for c in chunks))
            return self._link_arrays[subjects]

    def chunk_links(self, entity_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """For each entity, its chunks (by id) and the mention's description."""
        with self.lock:
            raw, index = self.graph._adj, self._links_index()
            return {e: dict(index.get(e, {})) for e in entity_ids if e in raw}

    def entity_chunk_ids(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        with self.lock:
            raw, index = self.graph._adj, self._links_index()
            return {e: list(index.get(e, ())) for e in entity_ids if e in raw}

    def entity_chunk_counts(self, entity_ids: Iterable[str]) -> dict[str, int]:
        """How many chunks each entity links to (``entity_chunk_ids`` without the lists)."""
        with self.lock:
            raw, index = self.graph._adj, self._links_index()
            return {e: len(index.get(e, ())) for e in entity_ids if e in raw}

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with self.lock:
            out = {}
            for chunk_id in chunk_ids:
                if self.graph.has_node(chunk_id) and self.graph.nodes[chunk_id].get("kind") == CHUNK:
                    node = self.graph.nodes[chunk_id]
                    out[chunk_id] = {k: node[k] for k in ("text", "doc_id", "order", "n_tokens")}
                    out[chunk_id]["subjects"] = list(node.get("subjects", ()))
                    out[chunk_id].update(citation_fields(node))
            return out

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """The entities each chunk mentions (its entity-chunk edges)."""
        with self.lock:
            adj, nodes, known = self.graph._adj, self.graph._node, self._mentioned  # plain dicts: views cost more
            chunk_ids = list(chunk_ids)
            for c in chunk_ids:
                if c not in known and c in adj:
                    known[c] = sorted(n for n in adj[c] if nodes[n].get("kind") == ENTITY)
            return {c: list(known[c]) for c in chunk_ids if c in known}

    def relation_weights(self, chunk_ids: Iterable[str]) -> dict[tuple[str, str], float]:
        """The relation edges the chunks state (``(smaller, larger)``), each with the weight their
        records sum to: the weight an index of those chunks alone gives it."""
        totals: dict[tuple[str, str], int] = {}
        with self.lock:
            nodes, adj = self.graph._node, self.graph._adj
            for chunk_id in chunk_ids:
                for u, v in nodes[chunk_id].get("relations", ()) if chunk_id in nodes else ():
                    record = adj[u][v]["sources"].get(chunk_id) if v in adj.get(u, {}) else None
                    if record is not None:
                        key = (min(u, v), max(u, v))
                        totals[key] = totals.get(key, 0) + round(float(record["weight"]) * WEIGHT_SCALE)
        return {key: total / WEIGHT_SCALE for key, total in totals.items()}

    def subject_chunks(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        """For each entity, the chunks that are *about* it (their ``subjects``), if any."""
        with self.lock:
            index = self._subjects()
            return {e: index[e] for e in entity_ids if e in index}

    def _subjects(self) -> dict[str, list[str]]:
        """Every entity's subject chunks (sorted); the caller holds the lock."""
        if self._subject_index is None:
            index: dict[str, list[str]] = {}
            for node, attrs in self.graph.nodes(data=True):
                for subject in attrs.get("subjects", ()) if attrs.get("kind") == CHUNK else ():
                    index.setdefault(subject, []).append(node)
            self._subject_index = {k: sorted(v) for k, v in index.items()}
        return self._subject_index

    def chunk_ids(self) -> list[str]:
        with self.lock:
            return sorted(n for n, kind in self.graph.nodes(data="kind") if kind == CHUNK)

    def count_chunks(self) -> int:
        with self.lock:
            return sum(1 for _, kind in self.graph.nodes(data="kind") if kind == CHUNK)

    def entity_ids(self) -> list[str]:
        with self.lock:
            return sorted(n for n, kind in self.graph.nodes(data="kind") if kind == ENTITY)

    def relation_edges(self) -> list[tuple[str, str]]:
        with self.lock:
            return sorted((min(u, v), max(u, v)) for u, v, kind in self.graph.edges(data="kind") if kind == RELATION)

    def relation_keywords(self) -> dict[tuple[str, str], str]:
        with self.lock:
            return {(min(u, v), max(u, v)): e["keywords"] for u, v, e in self.graph.edges(data=True)
                    if e.get("kind") == RELATION}

    def type_pool(self, examples_per_type: int = 3) -> dict[str, list[str]]:
        with self.lock:
            return rank_type_pool(((attrs["type"], attrs["name"], self.graph.degree(node))
                                   for node, attrs in self.graph.nodes(data=True) if attrs.get("kind") == ENTITY),
                                  examples_per_type)

    def stats(self) -> dict[str, int]:
        with self.lock:
            kinds = Counter(k for _, k in self.graph.nodes(data="kind"))
            edge_kinds = Counter(k for _, _, k in self.graph.edges(data="kind"))
            return {"chunks": kinds[CHUNK], "entities": kinds[ENTITY],
                    "relations": edge_kinds.get(RELATION, 0), "mentions": edge_kinds.get("mention", 0)}
