"""Sec. 3.2.2, eq. 3: query-guided reasoning paths from each seed entity.

    w_p(p | v_q) = w_v(v_s | v_q) * (1 + sum of w_e(e) over key edges on p
                                       + number of answer candidates on p)

Paths are acyclic, up to ``max_length`` edges. A beam bounds the search, and each node
expands at most ``max_branch`` neighbours (the most promising first), so a hub entity
cannot explode it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import networkx as nx


@dataclass(frozen=True)
class Path:
    nodes: tuple[str, ...]
    gain: float  # the bracket of eq. 3 minus its leading 1


def path_gain(nodes: tuple[str, ...], key_edges: dict[tuple[str, str], float],
              answer_candidates: set[str]) -> float:
    """Sum of key-edge scores on the path plus the count of answer candidates on it."""
    edges = sum(key_edges.get((min(a, b), max(a, b)), 0.0) for a, b in zip(nodes, nodes[1:]))
    return edges + sum(1 for node in nodes if node in answer_candidates)


def path_score(seed_similarity: float, gain: float) -> float:
    """Eq. 3 given w_v(v_s | v_q) and the path's gain."""
    return seed_similarity * (1.0 + gain)


def paths_from_seed(graph: nx.Graph, seed: str, *, key_edges: dict[tuple[str, str], float],
                    answer_candidates: set[str], max_length: int, beam_width: int = 64,
                    max_branch: int = 16) -> list[Path]:
    """Every acyclic path from ``seed`` of 0..max_length edges that survives the beam."""
    if not graph.has_node(seed):
        return []
    start = Path((seed,), 1.0 if seed in answer_candidates else 0.0)
    found, frontier = [start], [start]
    adjacency = graph._adj  # the plain dicts: networkx's views cost more than the search itself
    key_near: dict[str, dict[str, float]] = {}  # key-edge scores by endpoint: no (min, max) per step
    for (a, b), score in key_edges.items():
        key_near.setdefault(a, {})[b] = key_near.setdefault(b, {})[a] = score
    for _ in range(max_length):
        grown: list[Path] = []
        for path in frontier:
            last, visited = path.nodes[-1], set(path.nodes)
            near, keyed = adjacency[last], key_near.get(last, {})
            options = [(n, keyed.get(n, 0.0) + (1.0 if n in answer_candidates else 0.0))
                       for n in near if n not in visited]
            options.sort(key=lambda o: (-o[1], -near[o[0]].get("weight", 1.0), o[0]))
            grown.extend(Path(path.nodes + (n,), path.gain + g) for n, g in options[:max_branch])
        if not grown:
            break
        frontier = heapq.nsmallest(beam_width, grown, key=lambda p: (-p.gain, len(p.nodes), p.nodes))
        found.extend(frontier)
    return found


def top_paths(paths: list[Path], seed_similarity: float, k: int) -> list[tuple[Path, float]]:
    """The ``k`` best paths by eq. 3; among equal scores shorter paths win."""
    scored = [(p, path_score(seed_similarity, p.gain)) for p in paths]
    scored.sort(key=lambda item: (-item[1], len(item[0].nodes), item[0].nodes))
    return scored[:k]
