"""Sec. 3.2.2, eq. 2: key relationships by how many seed and answer nodes lie near an edge.

    w_e(e) = sum over v in (V_s u V_a) of count(v, G_{e,k})

where G_{e,k} is everything within k hops of either endpoint of e.
"""

from __future__ import annotations

import heapq
from typing import Iterable

import networkx as nx
import numpy as np
from scipy import sparse


def _edge_arrays(graph: nx.Graph) -> tuple[list[str], list[tuple[str, str]], np.ndarray, np.ndarray]:
    """Nodes, edges, and each edge's endpoint rows (read straight from the adjacency dicts)."""
    nodes = list(graph._adj)
    position = {node: i for i, node in enumerate(nodes)}
    edges = [(u, v) for u, near in graph._adj.items() for v in near if position[u] <= position[v]]
    left = np.fromiter((position[u] for u, _ in edges), dtype=np.int64, count=len(edges))
    right = np.fromiter((position[v] for _, v in edges), dtype=np.int64, count=len(edges))
    return nodes, edges, left, right


def _reach(n_nodes: int, left: np.ndarray, right: np.ndarray, anchor_rows: list[int], hops: int) -> np.ndarray:
    """Boolean matrix nodes x anchors: ``(I + A)^hops @ X`` with a sparse adjacency matrix."""
    reach = np.zeros((n_nodes, len(anchor_rows)), dtype=np.float32)
    reach[anchor_rows, np.arange(len(anchor_rows))] = 1.0
    if not anchor_rows or not n_nodes:
        return reach.astype(bool)
    loops = np.arange(n_nodes)
    rows, cols = np.concatenate([left, right, loops]), np.concatenate([right, left, loops])
    step = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n_nodes, n_nodes))
    for _ in range(hops):
        reach = np.minimum(step @ reach, 1.0)
    return reach.astype(bool)


def score_edges(graph: nx.Graph, seeds: Iterable[str], answer_candidates: Iterable[str],
                hops: int) -> dict[tuple[str, str], int]:
    """Eq. 2 for every edge of ``graph``: distinct seed/answer nodes within ``hops`` of the edge."""
    nodes, edges, left, right = _edge_arrays(graph)
    position = {node: i for i, node in enumerate(nodes)}
    rows = [position[a] for a in dict.fromkeys([*seeds, *answer_candidates]) if a in position]
    if not rows or not edges:
        return {}
    reach = _reach(len(nodes), left, right, rows, hops)
    counts = (reach[left] | reach[right]).sum(axis=1)
    found = [(edges[i], int(counts[i])) for i in np.flatnonzero(counts).tolist()]
    return {((u, v) if u <= v else (v, u)): c for (u, v), c in found}


def key_edges(edge_scores: dict[tuple[str, str], int], top: int,
              weights: dict[tuple[str, str], float] | None = None) -> dict[tuple[str, str], int]:
    """The top-ranked edges. Eq. 2 counts tie often; a tie goes to the stronger edge (its
    ``weight``: a stated relation counts twice a co-occurrence, and repeats add up), then to ids,
    so the choice is deterministic."""
    strength = weights or {}
    return dict(heapq.nsmallest(top, edge_scores.items(),
                                key=lambda item: (-item[1], -strength.get(item[0], 0.0), item[0])))


def edge_weights(graph: nx.Graph) -> dict[tuple[str, str], float]:
    """Each edge's ``weight`` (1.0 where unset), keyed as ``score_edges`` keys it."""
    return {((u, v) if u <= v else (v, u)): float(d.get("weight", 1.0)) for u, v, d in graph.edges(data=True)}
