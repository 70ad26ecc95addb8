"""Eq. 3 for all of a query's seeds at once: the beam search of ``PathSearch.from_seed`` run on
every seed's frontier together in array operations, and the best paths of each (query entity,
seed) pair (``reasoning_paths.top_paths``) chosen in one sort. Gives exactly what calling
``from_seed`` and then ``top_paths`` for each pair gives: the same paths, scores and order.

A path is a row of node numbers (numbered in sorted id order, so comparing numbers compares
ids); its gain is summed step by step in the same order as ``from_seed`` sums it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minirag_core.retrieval.topology.array_search import PathSearch


def _segments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For runs of ``counts`` entries: each entry's run, its offset within the run, and where each run starts."""
    owner = np.repeat(np.arange(len(counts)), counts)
    starts = np.cumsum(counts) - counts
    return owner, np.arange(int(counts.sum())) - starts[owner], starts


def _first_per_group(groups: np.ndarray, limit: int) -> np.ndarray:
    """A mask of the first ``limit`` entries of each run of equal values in sorted ``groups``."""
    if not len(groups):
        return np.zeros(0, dtype=bool)
    run_start = np.searchsorted(groups, groups, side="left")
    return np.arange(len(groups)) - run_start < limit


def _grow(search: PathSearch, paths: np.ndarray, gains: np.ndarray, needed: int,
          max_branch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every path extended by the first ``max_branch`` of its last node's ``needed`` best ranked
    neighbours that it does not visit yet: (parent rows, new paths, their gains)."""
    last = paths[:, -1]
    start = search._indptr[last]
    counts = np.minimum(start + needed, search._indptr[last + 1]) - start
    parent, offset, run_starts = _segments(counts)
    entries = start[parent] + offset
    fresh = ~(paths[parent] == search._cols[entries][:, None]).any(axis=1)
    taken = np.concatenate([[0], np.cumsum(fresh)])
    rank = taken[1:] - taken[run_starts][parent]  # 1-based among the fresh neighbours of each parent
    keep = fresh & (rank <= max_branch)
    parent, entries = parent[keep], entries[keep]
    grown = np.concatenate([paths[parent], search._cols[entries][:, None]], axis=1)
    return parent, grown, gains[parent] + search._gain[entries]


@dataclass
class PathTable:
    """The paths ``best_paths`` keeps, in its order: each path's pair (index into the pairs), its
    node numbers in the subgraph (rows padded with -1), its length in nodes and its eq. 3 score."""

    pair: np.ndarray
    nodes: np.ndarray
    lengths: np.ndarray
    scores: np.ndarray


def _padded(paths: np.ndarray, width: int) -> np.ndarray:
    """``paths`` widened to ``width`` columns with -1 (no node)."""
    out = np.full((len(paths), width), -1, dtype=np.int64)
    out[:, :paths.shape[1]] = paths
    return out


def path_table(search: PathSearch, pairs: list[tuple[str, float]], *, max_length: int, beam_width: int,
               max_branch: int, k: int) -> PathTable:
    """``best_paths`` as arrays: every pair's ``k`` best paths, pair by pair, each pair's best first."""
    position, n_names = search.sub.position, len(search.sub.nodes)
    seeds = sorted({position[s] for s, _ in pairs if s in position})
    group_of = {number: i for i, number in enumerate(seeds)}
    paths = np.array(seeds, dtype=np.int64).reshape(-1, 1)
    groups = np.arange(len(seeds))
    gains = search._is_candidate[paths[:, 0]].astype(np.float64)
    width = max_length + 1
    found = [(groups, _padded(paths, width), gains, np.ones(len(seeds), dtype=np.int64))]
    for step in range(max_length):
        if max_branch <= 0 or not len(paths):
            break
        parent, grown, grown_gains = _grow(search, paths, gains, max_branch + max_length, max_branch)
        grown_groups = groups[parent]
        # each seed's beam: by (-gain, nodes) (all grown paths have one length: codes order as nodes do)
        codes = _path_codes(grown, np.full(len(grown), grown.shape[1]), n_names)
        order = np.lexsort([codes, -grown_gains, grown_groups])
        order = order[_first_per_group(grown_groups[order], beam_width)]
        paths, gains, groups = grown[order], grown_gains[order], grown_groups[order]
        found.append((groups, _padded(paths, width), gains, np.full(len(paths), step + 2)))
    all_groups, all_nodes, all_gains, all_lengths = (np.concatenate(parts) for parts in zip(*found))
    by_group = np.argsort(all_groups, kind="stable")
    bounds = np.searchsorted(all_groups[by_group], np.arange(len(seeds) + 1))
    # every pair's candidate paths side by side, scored with its own w_v
    spans = [(i, by_group[bounds[group_of[position[s]]]:bounds[group_of[position[s]] + 1]])
             for i, (s, _) in enumerate(pairs) if s in position]
    if not spans or k <= 0:
        return PathTable(np.zeros(0, np.int64), np.zeros((0, width), np.int64), np.zeros(0, np.int64),
                         np.zeros(0, np.float64))
    pair = np.repeat(np.array([i for i, _ in spans]), [len(rows) for _, rows in spans])
    rows = np.concatenate([rows for _, rows in spans])
    similarity = np.array([w for _, w in pairs], dtype=np.float64)
    scores = similarity[pair] * (1.0 + all_gains[rows])
    nodes, lengths = all_nodes[rows], all_lengths[rows]
    order = np.lexsort([_path_codes(nodes, lengths, n_names), -scores, pair])
    order = order[_first_per_group(pair[order], k)]
    return PathTable(pair[order], nodes[order], lengths[order], scores[order])


def named_paths(search: PathSearch, table: PathTable) -> list[list[str]]:
    """Each path of ``table`` as its node ids."""
    named = np.array([*search.sub.nodes, ""], dtype=object)[table.nodes].tolist()  # -1 (no node) names ""
    return [row[:length] for row, length in zip(named, table.lengths.tolist())]


def best_paths(search: PathSearch, pairs: list[tuple[str, float]], *, max_length: int, beam_width: int,
               max_branch: int, k: int) -> list[list[tuple[list[str], float]]]:
    """For each (seed, w_v) pair: its ``k`` best (nodes, eq. 3 score), as ``top_paths(search.from_seed(seed,
    ...), w_v, k)`` gives them."""
    table = path_table(search, pairs, max_length=max_length, beam_width=beam_width, max_branch=max_branch, k=k)
    out: list[list[tuple[list[str], float]]] = [[] for _ in pairs]
    for i, nodes, score in zip(table.pair.tolist(), named_paths(search, table), table.scores.tolist()):
        out[i].append((nodes, score))
    return out


def _path_codes(nodes: np.ndarray, lengths: np.ndarray, n_nodes: int) -> np.ndarray:
    """One int64 per path ordering as (length, nodes) does (``nodes`` padded with -1), where it fits."""
    base = n_nodes + 1
    if (nodes.shape[1] + 1) * np.log2(max(base, 2)) >= 62:  # too long for one number: rank the rows instead
        order = np.lexsort([*nodes.T[::-1], lengths])
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[order] = np.arange(len(order))
        return ranks
    codes = lengths.astype(np.int64)
    for column in nodes.T:
        codes = codes * base + (column + 1)
    return codes
