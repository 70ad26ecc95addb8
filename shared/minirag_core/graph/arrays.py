"""The relation graph as compact arrays: the k-hop expansion, and the ``Subgraph`` that mini
mode's array search (``retrieval/topology/array_search.py``) scores, without an ``nx.Graph`` per query.

``RelationArrays`` holds every relation edge once per graph version as a CSR adjacency whose
rows list each entity's strongest neighbours first; a store that offers it
(``relation_arrays()``) is expanded here directly, any other ``GraphView`` through its
``entity_subgraph``. The expansion gives exactly what ``NetworkXGraphStore.entity_subgraph``
gives; node ids are numbered in sorted order, so comparing numbers breaks ties as comparing
ids does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

import networkx as nx
import numpy as np

from minirag_core.graph.heterogeneous import ENTITY, RELATION


Node = TypeVar("Node", int, str)
#: stored attributes of relation edges, by (id, id) pair, for the pairs asked
EdgeAttrs = Callable[[list[tuple[str, str]]], dict[tuple[str, str], dict[str, Any]]]


def bounded_expansion(start: list[Node], neighbours: Callable[[Node, int], Iterable[Node]], hops: int,
                      max_nodes: int, max_neighbors: int) -> dict[Node, int]:
    """Breadth-first from ``start`` (node -> hop): each node adds at most ``max_neighbors`` new
    neighbours, in the order ``neighbours(node, nodes reached so far)`` gives them (strongest
    first), until ``max_nodes`` are reached, so a hub cannot pull in the whole graph."""
    depth = {s: 0 for s in start}
    queue, head = list(depth), 0
    while head < len(queue) and len(depth) < max_nodes:
        node = queue[head]
        head += 1
        if depth[node] >= hops:
            continue
        added = 0
        for neighbour in neighbours(node, len(depth)):
            if added >= max_neighbors or len(depth) >= max_nodes:
                break
            if neighbour in depth:
                continue
            depth[neighbour] = depth[node] + 1
            queue.append(neighbour)
            added += 1
    return depth


def _edge_columns(edges: list[tuple[int, int, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(left, right, weight) arrays of ``(left, right, weight)`` edge triples."""
    if not edges:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    left, right, weight = zip(*edges)
    return np.array(left, np.int64), np.array(right, np.int64), np.array(weight, np.float64)


def _both_ways(left: np.ndarray, right: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each undirected edge as two directed entries: (rows, cols, weights)."""
    return np.concatenate([left, right]), np.concatenate([right, left]), np.concatenate([weight, weight])


def _row_starts(rows: np.ndarray, n: int) -> np.ndarray:
    """CSR ``indptr`` of entries sorted by row."""
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])


class ChunkLinks:
    """Every entity's chunks (its entity-chunk edges) as CSR rows of positions into the sorted
    chunk ids: for a store whose mentions live on disk, a query's links become array slices."""

    def __init__(self, entity_position: dict[str, int], chunk_ids: list[str],
                 mentions: Iterable[tuple[str, str]]) -> None:
        """``entity_position``: entity id -> row (every entity); ``chunk_ids`` sorted;
        ``mentions`` (entity, chunk) pairs, those naming an unknown id are skipped."""
        self.entity_position, self.chunk_ids = entity_position, chunk_ids
        self.chunk_position = chunk_position = {c: i for i, c in enumerate(chunk_ids)}
        pairs = np.fromiter(((entity_position.get(e, -1), chunk_position.get(c, -1)) for e, c in mentions),
                            dtype=np.dtype((np.int64, 2))).reshape(-1, 2)
        pairs = pairs[(pairs >= 0).all(axis=1)]
        rows, cols = pairs[:, 0], pairs[:, 1]
        order = np.lexsort((cols, rows))
        self.indices = cols[order]
        self.indptr = _row_starts(rows, len(entity_position))
        self.counts = np.diff(self.indptr)  # each entity's number of chunks
        self._entity_ids: list[str] | None = None
        self._by_chunk: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def entity_ids(self) -> list[str]:
        """The entity ids by row."""
        if self._entity_ids is None:
            ids = [""] * len(self.entity_position)
            for entity, row in self.entity_position.items():
                ids[row] = entity
            self._entity_ids = ids
        return self._entity_ids

    def by_chunk(self) -> tuple[np.ndarray, np.ndarray]:
        """The links from the chunks' side: (indptr over chunk positions, entity rows), each
        chunk's entities in row (id) order; built on first use."""
        if self._by_chunk is None:
            owners = np.repeat(np.arange(len(self.counts)), self.counts)
            order = np.lexsort((owners, self.indices))
            self._by_chunk = (_row_starts(self.indices, len(self.chunk_ids)), owners[order])
        return self._by_chunk

    def chunk_lists(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        """For each known entity, its chunk ids in sorted order (unknown ids are left out)."""
        found: dict[str, list[str]] = {}
        chunk_ids, indptr = self.chunk_ids, self.indptr
        for entity in entity_ids:
            row = self.entity_position.get(entity)
            if row is not None:
                found[entity] = [chunk_ids[j] for j in self.indices[indptr[row]:indptr[row + 1]].tolist()]
        return found


@dataclass
class Subgraph:
    """Entity nodes near the seeds (sorted ids, with hop and type) and the relation edges
    among them (``left < right`` local numbers, with weights)."""

    nodes: list[str]
    hop: list[int]
    types: list[str]
    left: np.ndarray
    right: np.ndarray
    weight: np.ndarray
    #: the stored attributes (``description``, ``keywords``) of edges given by their two ids, in one read
    edge_attrs: EdgeAttrs
    #: each edge both ways as (rows, cols, weights), sorted by (row, -weight, col); made on first use if not given
    directed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    position: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.position = dict(zip(self.nodes, range(len(self.nodes))))
        self._indptr: np.ndarray | None = None

    def both_ways(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, rows, cols, weights): every edge from both ends, each node's strongest first (then by number)."""
        if self.directed is None:
            rows, cols, weights = _both_ways(self.left, self.right, self.weight)
            order = np.lexsort((cols, -weights, rows))
            self.directed = (rows[order], cols[order], weights[order])
        if self._indptr is None:
            self._indptr = _row_starts(self.directed[0], len(self.nodes))
        return (self._indptr, *self.directed)

    @classmethod
    def from_graph(cls, graph: nx.Graph) -> Subgraph:
        """The arrays of a graph an ``entity_subgraph`` returned."""
        nodes = sorted(graph._adj)
        position = {n: i for i, n in enumerate(nodes)}
        attrs = graph._node
        left, right, weight = _edge_columns([(position[u], position[v], e.get("weight", 1.0))
                                             for u, near in graph._adj.items() for v, e in near.items()
                                             if position[u] < position[v]])
        return cls(nodes, [attrs[n].get("hop", 0) for n in nodes], [str(attrs[n].get("type", "")) for n in nodes],
                   left, right, weight, lambda pairs: {(u, v): graph._adj[u][v] for u, v in pairs})

    def degree(self) -> np.ndarray:
        return np.bincount(np.concatenate([self.left, self.right]), minlength=len(self.nodes))


class RelationArrays:
    """Every relation edge of a graph as CSR rows, strongest neighbour first (then by id)."""

    def __init__(self, ids: list[str], types: list[str], edges: tuple[np.ndarray, np.ndarray, np.ndarray],
                 edge_attrs: EdgeAttrs, max_neighbors: int = 40, position: dict[str, int] | None = None) -> None:
        """``ids`` sorted (``position``: id -> index, when the caller has it); ``edges`` as (left,
        right, weight) columns of positions in ``ids``; ``edge_attrs(pairs)`` the relations' stored
        attributes by pair (empty if a write removed one)."""
        self.max_neighbors = max_neighbors
        self.ids, self.types, self.edge_attrs = ids, types, edge_attrs
        self.position = position if position is not None else {n: i for i, n in enumerate(ids)}
        rows, cols, weights = _both_ways(*edges)
        order = np.lexsort((cols, -weights, rows))
        self.indices, self.weights = cols[order], weights[order]
        self.indptr = _row_starts(rows, len(ids))
        self._rows: dict[int, list[int]] = {}
        self._cached = 0

    @classmethod
    def from_graph(cls, graph: nx.Graph, max_neighbors: int = 40) -> RelationArrays:
        """The arrays of a whole networkx graph."""
        ids = sorted(n for n, kind in graph.nodes(data="kind") if kind == ENTITY)
        position = {n: i for i, n in enumerate(ids)}
        nodes = graph._node
        edges = _edge_columns([(position[u], position[v], e["weight"]) for u, v, e in graph.edges(data=True)
                               if e.get("kind") == RELATION and u in position and v in position])
        raw = graph._adj
        return cls(ids, [str(nodes[n].get("type", "")) for n in ids], edges,
                   lambda pairs: {(a, b): raw.get(a, {}).get(b, {}) for a, b in pairs}, max_neighbors)

    #: relation neighbours held as Python lists (rows read by queries), at most this many in all
    CACHED_NEIGHBOURS = 500_000  # about 18 MB of Python ints

    def _neighbours(self, node: int, reached: int) -> list[int]:
        """Entity ``node``'s relation neighbours, strongest first (the whole row, kept as a list:
        a node adds at most ``max_neighbors``, so the expansion stops reading it long before its end)."""
        found = self._rows.get(node)
        if found is None:
            start, end = self.indptr[node:node + 2].tolist()
            if self._cached + end - start > self.CACHED_NEIGHBOURS:
                self._rows, self._cached = {}, 0
            found = self._rows[node] = self.indices[start:end].tolist()
            self._cached += end - start
        return found

    def expand(self, seeds: Iterable[str], hops: int, max_nodes: int) -> Subgraph:
        """``NetworkXGraphStore.entity_subgraph`` on the arrays: breadth-first over relation
        edges, each node adding at most ``max_neighbors`` strongest new neighbours."""
        max_neighbors = self.max_neighbors
        depth = bounded_expansion([self.position[s] for s in dict.fromkeys(seeds) if s in self.position],
                                  self._neighbours, hops, max_nodes, max_neighbors)
        members = np.sort(np.fromiter(depth, dtype=np.int64, count=len(depth)))
        directed = self._induced(members)
        rows, cols, weights = directed
        one_way = cols > rows
        ids, types, numbers = self.ids, self.types, members.tolist()
        return Subgraph([ids[m] for m in numbers], [depth[m] for m in numbers], [types[m] for m in numbers],
                        rows[one_way], cols[one_way], weights[one_way], self.edge_attrs, directed)

    def _induced(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges among ``members`` (sorted global numbers) from both ends in local numbers, as
        (rows, cols, weights) sorted by (row, -weight, col): the rows' order, restricted."""
        local = np.full(len(self.ids), -1, dtype=np.int64)
        local[members] = np.arange(len(members))
        starts, ends = self.indptr[members], self.indptr[members + 1]
        lengths = ends - starts
        owner = np.repeat(np.arange(len(members)), lengths)
        offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        entries = np.repeat(starts, lengths) + offsets
        target = local[self.indices[entries]]
        keep = (target >= 0) & (target != owner)
        return owner[keep], target[keep], self.weights[entries[keep]]
