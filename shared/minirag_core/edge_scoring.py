"""Sec. 3.2.2, eq. 2: key relationships by how many seed and answer nodes lie near an edge.

    w_e(e) = sum over v in (V_s u V_a) of count(v, G_{e,k})

where G_{e,k} is everything within k hops of either endpoint of e.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable

import networkx as nx


def anchors_within_hops(graph: nx.Graph, anchors: Iterable[str], hops: int) -> dict[str, int]:
    """For every node, a bitmask of the anchors that reach it within ``hops`` edges."""
    reach: dict[str, int] = {}
    for index, anchor in enumerate(dict.fromkeys(a for a in anchors if graph.has_node(a))):
        bit = 1 << index
        seen = {anchor: 0}
        queue = deque([anchor])
        while queue:
            node = queue.popleft()
            reach[node] = reach.get(node, 0) | bit
            if seen[node] == hops:
                continue
            for neighbour in graph.neighbors(node):
                if neighbour not in seen:
                    seen[neighbour] = seen[node] + 1
                    queue.append(neighbour)
    return reach


def score_edges(graph: nx.Graph, seeds: Iterable[str], answer_candidates: Iterable[str],
                hops: int) -> dict[tuple[str, str], int]:
    """Eq. 2 for every edge of ``graph``: distinct seed/answer nodes within ``hops`` of the edge."""
    anchors = list(dict.fromkeys([*seeds, *answer_candidates]))
    reach = anchors_within_hops(graph, anchors, hops)
    scores = {}
    for u, v in graph.edges():
        mask = reach.get(u, 0) | reach.get(v, 0)
        if mask:
            scores[(min(u, v), max(u, v))] = mask.bit_count()
    return scores


def key_edges(edge_scores: dict[tuple[str, str], int], top: int) -> dict[tuple[str, str], int]:
    """The top-ranked edges (ties broken by id, so the choice is deterministic)."""
    ranked = sorted(edge_scores.items(), key=lambda item: (-item[1], item[0]))
    return dict(ranked[:top])
