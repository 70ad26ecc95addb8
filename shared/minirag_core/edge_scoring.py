"""Sec. 3.2.2, eq. 2: key relationships by how many seed and answer nodes lie near an edge.

    w_e(e) = sum over v in (V_s u V_a) of count(v, G_{e,k})

where G_{e,k} is everything within k hops of either endpoint of e.
"""

from __future__ import annotations

from typing import Iterable

import networkx as nx
import numpy as np
from scipy import sparse


def anchor_reach(graph: nx.Graph, anchors: Iterable[str], hops: int) -> tuple[list[str], np.ndarray]:
    """Which anchors reach each node within ``hops`` edges: (nodes, boolean matrix nodes x anchors).

    Computed as ``(I + A)^hops @ X`` with a sparse adjacency matrix, one product per hop.
    """
    nodes = list(graph.nodes)
    position = {node: i for i, node in enumerate(nodes)}
    anchor_list = [a for a in dict.fromkeys(anchors) if a in position]
    reach = np.zeros((len(nodes), len(anchor_list)), dtype=np.float32)
    for column, anchor in enumerate(anchor_list):
        reach[position[anchor], column] = 1.0
    if not anchor_list or not nodes:
        return nodes, reach.astype(bool)
    rows, cols = [], []
    for u, v in graph.edges():
        rows += [position[u], position[v]]
        cols += [position[v], position[u]]
    step = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(nodes), len(nodes)))
    step = step + sparse.identity(len(nodes), dtype=np.float32, format="csr")
    for _ in range(hops):
        reach = np.minimum(step @ reach, 1.0)
    return nodes, reach.astype(bool)


def score_edges(graph: nx.Graph, seeds: Iterable[str], answer_candidates: Iterable[str],
                hops: int) -> dict[tuple[str, str], int]:
    """Eq. 2 for every edge of ``graph``: distinct seed/answer nodes within ``hops`` of the edge."""
    nodes, reach = anchor_reach(graph, [*seeds, *answer_candidates], hops)
    if reach.shape[1] == 0:
        return {}
    position = {node: i for i, node in enumerate(nodes)}
    edges = list(graph.edges())
    if not edges:
        return {}
    left = np.fromiter((position[u] for u, _ in edges), dtype=np.int64, count=len(edges))
    right = np.fromiter((position[v] for _, v in edges), dtype=np.int64, count=len(edges))
    counts = (reach[left] | reach[right]).sum(axis=1)
    return {(min(u, v), max(u, v)): int(c) for (u, v), c in zip(edges, counts) if c}


def key_edges(edge_scores: dict[tuple[str, str], int], top: int) -> dict[tuple[str, str], int]:
    """The top-ranked edges (ties broken by id, so the choice is deterministic)."""
    ranked = sorted(edge_scores.items(), key=lambda item: (-item[1], item[0]))
    return dict(ranked[:top])
