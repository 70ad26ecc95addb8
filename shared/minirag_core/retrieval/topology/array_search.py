"""Mini mode's graph work on a ``Subgraph``'s arrays: answer candidates, eq. 2 key edges and
eq. 3 path search, each giving exactly what its networkx counterpart gives
(``seeds.select_answer_candidates``, ``key_edges.score_edges`` + ``key_edges``,
``reasoning_paths.paths_from_seed``); node ids are numbered in sorted order, so comparing
numbers breaks ties as comparing ids does.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from minirag_core.graph.arrays import Subgraph
from minirag_core.retrieval.topology.reasoning_paths import Path
from minirag_core.types import is_known_type


def relation_subgraph(view: Any, seeds: Iterable[str], hops: int, max_nodes: int) -> Subgraph:
    """The seeds' k-hop neighbourhood: from the view's ``relation_arrays()`` where it has
    them, else from its ``entity_subgraph``."""
    arrays = getattr(view, "relation_arrays", None)
    if arrays is not None:
        return arrays().expand(seeds, hops, max_nodes)
    return Subgraph.from_graph(view.entity_subgraph(seeds, hops, max_nodes))


def answer_candidates(sub: Subgraph, seeds: set[str], answer_types: list[str], limit: int,
                      specificity: Callable[[list[str]], Mapping[str, float]] | None = None) -> list[str]:
    """``select_answer_candidates`` on a ``Subgraph``. With ``specificity`` (entity ids -> 0-1),
    among candidates as near the seeds the more specific come first, so hubs found near every
    question's seeds do not crowd out the question's own candidates."""
    wanted = {t.strip().upper() for t in answer_types if is_known_type(t)}
    if not wanted:
        return []
    is_wanted = {t: t.upper() in wanted for t in set(sub.types)}
    found = np.array([i for i, (n, t) in enumerate(zip(sub.nodes, sub.types)) if is_wanted[t] and n not in seeds],
                     dtype=np.int64)
    if not len(found):
        return []
    hop = np.array(sub.hop, dtype=np.int64)[found]
    if 0 < limit < len(found):  # only the hops the first ``limit`` reach are ranked
        inside = hop <= np.partition(hop, limit - 1)[limit - 1]
        found, hop = found[inside], hop[inside]
    degree = sub.degree()[found]
    keys = [found, -degree, hop]  # (hop, -degree, number), the last key first
    if specificity is not None:
        names = [sub.nodes[i] for i in found.tolist()]
        weight = specificity(names)
        values = np.array([weight.get(n, 1.0) for n in names], dtype=np.float64)
        distinct, inverse = np.unique(values, return_inverse=True)  # rounded as Python rounds, once per value
        rounded = np.array([round(v, 6) for v in distinct.tolist()], dtype=np.float64)[inverse.reshape(-1)]
        keys.insert(2, -rounded)
    return [sub.nodes[i] for i in found[np.lexsort(keys)][:limit].tolist()]


def _popcount(bits: np.ndarray) -> np.ndarray:
    """Set bits of each ``uint64`` (as int64)."""
    if hasattr(np, "bitwise_count"):  # NumPy 2
        return np.bitwise_count(bits).astype(np.int64)
    return _BYTE_BITS[bits.view(np.uint8)].reshape(*bits.shape, 8).sum(axis=-1)


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _reach_bits(sub: Subgraph, anchor_rows: list[int], hops: int) -> np.ndarray:
    """Which anchors lie within ``hops`` of each node, as bit sets (nodes x words of 64
    anchors): ``key_edges._reach`` packed, one OR over each node's neighbours per hop."""
    n_nodes = len(sub.nodes)
    anchors = np.arange(len(anchor_rows))
    reach = np.zeros((n_nodes, (len(anchor_rows) + 63) // 64), dtype=np.uint64)
    reach[anchor_rows, anchors // 64] = np.left_shift(np.uint64(1), (anchors % 64).astype(np.uint64))
    indptr, _, cols, _ = sub.both_ways()
    starts = indptr[:-1]
    linked = np.flatnonzero(indptr[1:] > starts)
    for _ in range(hops):
        reach[linked] |= np.bitwise_or.reduceat(reach[cols], starts[linked], axis=0)
    return reach


def key_edges(sub: Subgraph, seeds: Iterable[str], candidates: Iterable[str], hops: int,
              top: int) -> dict[tuple[str, str], int]:
    """``key_edges.key_edges(score_edges(...), top, edge_weights(...))`` on a ``Subgraph``."""
    rows = [sub.position[a] for a in dict.fromkeys([*seeds, *candidates]) if a in sub.position]
    if not rows or not len(sub.left):
        return {}
    reach = _reach_bits(sub, rows, hops)
    counts = _popcount(reach[sub.left] | reach[sub.right]).sum(axis=1)
    scored = np.flatnonzero(counts)
    if 0 < top < len(scored):  # only edges counting as many as the top-th best can be chosen
        scored = scored[counts[scored] >= -np.partition(-counts[scored], top - 1)[top - 1]]
    chosen = scored[np.lexsort((sub.right[scored], sub.left[scored], -sub.weight[scored], -counts[scored]))][:max(top, 0)]
    nodes = sub.nodes
    return {(nodes[sub.left[i]], nodes[sub.right[i]]): int(counts[i]) for i in chosen.tolist()}


class PathSearch:
    """``paths_from_seed`` on a ``Subgraph``: every node's neighbours are ranked in one array
    sort (their order depends only on the key edges and candidates, not on the path), and
    only as many as a path can take are turned into Python objects."""

    def __init__(self, sub: Subgraph, key_edges: dict[tuple[str, str], float], answer_candidates: set[str]) -> None:
        self.sub = sub
        self.candidates = answer_candidates
        position, n = sub.position, len(sub.nodes)
        self._indptr, rows, cols, _ = sub.both_ways()  # each row strongest first, then by number
        is_candidate = np.zeros(n, dtype=bool)
        is_candidate[[position[c] for c in answer_candidates if c in position]] = True
        keyed = np.zeros(len(rows), dtype=np.float64)
        pairs = [(position[a], position[b], score) for (a, b), score in key_edges.items()
                 if a in position and b in position]
        if pairs and len(rows):  # both directions of each key edge, found by entry code
            codes = rows * n + cols
            key_codes = np.array([a * n + b for a, b, _ in pairs] + [b * n + a for a, b, _ in pairs])
            scores = np.array([s for *_, s in pairs] * 2, dtype=np.float64)
            ranked = np.argsort(key_codes)
            at = np.minimum(np.searchsorted(key_codes[ranked], codes), len(ranked) - 1)
            hit = key_codes[ranked][at] == codes
            keyed[hit] = scores[ranked][at[hit]]
        # eq. 3's gain of stepping onto each neighbour, as ``paths_from_seed`` adds it
        gain = keyed + is_candidate[cols].astype(np.float64)
        order = np.lexsort((-gain, rows))  # stable: each row by (-gain, -weight, id)
        self._cols, self._gain = cols[order], gain[order]
        self._is_candidate = is_candidate
        self._options: dict[tuple[int, int], list[tuple[str, int, float]]] = {}

    def _ranked(self, node: int, needed: int) -> list[tuple[str, int, float]]:
        """The first ``needed`` (neighbour id, number, gain) by (-gain, -weight, id)."""
        found = self._options.get((node, needed))
        if found is None:
            start = self._indptr[node]
            end = min(start + needed, self._indptr[node + 1])
            nodes = self.sub.nodes
            found = self._options[node, needed] = [(nodes[c], c, g) for c, g in zip(
                self._cols[start:end].tolist(), self._gain[start:end].tolist())]
        return found

    def from_seed(self, seed: str, *, max_length: int, beam_width: int = 64, max_branch: int = 16) -> list[Path]:
        """Every acyclic path from ``seed`` of 0..max_length edges that survives the beam."""
        position = self.sub.position
        if seed not in position:
            return []
        start = Path((seed,), 1.0 if seed in self.candidates else 0.0)
        found = [start]
        # a path while searched: (gain, names, numbers); ranked as (-gain, length, numbers), which
        # orders as (-gain, length, names) does (numbers follow the sorted ids); Paths made for the beam only
        frontier = [(start.gain, start.nodes, (position[seed],))]
        needed = max_branch + max_length  # a path skips at most its own nodes
        for _ in range(max_length):
            grown: list[tuple[float, int, tuple[int, ...], tuple[str, ...]]] = []
            for gain_so_far, names, numbers in frontier:
                taken = 0
                for name, number, gain in self._ranked(numbers[-1], needed) if max_branch > 0 else ():
                    if number in numbers:
                        continue
                    grown.append((-(gain_so_far + gain), len(numbers) + 1, numbers + (number,), names + (name,)))
                    taken += 1
                    if taken >= max_branch:
                        break
            if not grown:
                break
            frontier = [(-neg_gain, names, numbers) for neg_gain, _, numbers, names in heapq.nsmallest(beam_width, grown)]
            found.extend(Path(names, gain) for gain, names, _ in frontier)
        return found
