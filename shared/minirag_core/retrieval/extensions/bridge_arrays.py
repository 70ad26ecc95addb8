"""``bridging.bridge_scores`` on a store's link arrays (``link_arrays()``): every step's (source
chunk, bridge entity, reached chunk) triples in array operations instead of nested Python loops.

Gives exactly what ``bridge_scores`` gives. There, a chunk's score rises only when a way to it
beats every earlier one, so of the ways to a chunk the one kept is the first (in the loops'
order: sources, then entities, then chunks reached, each in id order) of those with the best
value of the last step that raised it; values are the same products in the same order.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import numpy as np

from minirag_core.graph.arrays import ChunkLinks
from minirag_core.retrieval.extensions.bridging import Bridge, bridge_scores
from minirag_core.retrieval.topology.chunk_ranking import (
    relative_specificity, relative_value, relative_values)
from minirag_core.scores import top_ids


def _slices(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For CSR ``rows``: each entry's row index (into ``rows``) and its position in the CSR."""
    starts, counts = indptr[rows], indptr[rows + 1] - indptr[rows]
    owner = np.repeat(np.arange(len(rows)), counts)
    return owner, starts[owner] + np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)


class _Best:
    """Each chunk's best score so far and the way that set it (source, entity as positions)."""

    def __init__(self, n_chunks: int) -> None:
        self.score = np.zeros(n_chunks, dtype=np.float64)
        self.reached = np.zeros(n_chunks, dtype=bool)
        self.way = np.zeros((n_chunks, 3), dtype=np.int64)  # (kind: 0 chunk 1 seed, source, entity)

    def offer(self, targets: np.ndarray, values: np.ndarray, kinds: np.ndarray, sources: np.ndarray,
              entities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raise each target's score to its best offered value where that beats its score (the
        first of equal offers wins); the raised targets (sorted) and their new values."""
        order = np.lexsort((np.arange(len(targets)), -values, targets))
        first = np.ones(len(order), dtype=bool)
        first[1:] = targets[order][1:] != targets[order][:-1]
        best = order[first]
        better = values[best] > self.score[targets[best]]
        best = best[better]
        raised = targets[best]
        self.score[raised] = values[best]
        self.reached[raised] = True
        self.way[raised] = np.stack([kinds[best], sources[best], entities[best]], axis=1)
        return raised, values[best]


def bridge_scores_on_arrays(mentions: ChunkLinks, subjects: ChunkLinks, relevance: Mapping[str, float],
                            seeds: dict[str, float], *, seed_chunks: int, steps: int, damping: float,
                            n_chunks: int, specificity_exponent: float | None,
                            max_frontier: int = 0, local_pool: int = 0) -> tuple[dict[str, float], list[Bridge]]:
    """``bridge_scores`` with ``entity_weight`` the entities' relative specificity among ``n_chunks``
    chunks raised to ``specificity_exponent`` (``None``: no weighting); ``mentions`` and
    ``subjects`` are the store's link arrays (the same entity rows and chunk positions).
    ``local_pool`` > 0: an entity's mentions among the ``local_pool`` most relevant chunks do
    not count against its specificity (see ``local_counts``)."""
    chunk_ids, chunk_position, entity_ids = mentions.chunk_ids, mentions.chunk_position, mentions.entity_ids
    best = _Best(len(chunk_ids))
    counts = mentions.counts
    if local_pool > 0 and specificity_exponent:
        pool = np.array([chunk_position[c] for c in top_ids(relevance, local_pool) if c in chunk_position],
                        dtype=np.int64)
        indptr, by_chunk = mentions.by_chunk()
        _, entries = _slices(indptr, pool)
        counts = outside_counts(counts, np.bincount(by_chunk[entries], minlength=len(counts)))

    def weights(entity_rows: np.ndarray) -> np.ndarray:
        if specificity_exponent is None or specificity_exponent == 0:
            return np.ones(len(entity_rows), dtype=np.float64)
        return relative_values(counts[entity_rows], n_chunks, specificity_exponent)

    seed_rows = np.array([mentions.entity_position[s] for s in sorted(seeds) if s in mentions.entity_position],
                         dtype=np.int64)
    owner, entries = _slices(subjects.indptr, seed_rows)
    if len(entries):  # the query names a subject
        seed_values = np.array([seeds[entity_ids[r]] for r in seed_rows.tolist()], dtype=np.float64)
        values = (seed_values * weights(seed_rows))[owner]
        best.offer(subjects.indices[entries], values, np.ones(len(entries), np.int64), seed_rows[owner],
                   seed_rows[owner])
    top = [(c, relevance[c]) for c in top_ids(relevance, seed_chunks)]
    peak = top[0][1] if top and top[0][1] > 0 else 1.0
    known = [(chunk_position[c], s / peak) for c, s in top if c in chunk_position]
    frontier = np.array([p for p, _ in known], dtype=np.int64)
    strength = np.array([v for _, v in known], dtype=np.float64)
    chunk_indptr, chunk_entities = mentions.by_chunk()
    for _ in range(steps):
        if not len(frontier):
            break
        by_id = np.argsort(frontier, kind="stable")  # sources in id order
        frontier, strength = frontier[by_id], strength[by_id]
        source_of, mention_entries = _slices(chunk_indptr, frontier)
        entities = chunk_entities[mention_entries]
        link_of, subject_entries = _slices(subjects.indptr, entities)
        targets = subjects.indices[subject_entries]
        sources = source_of[link_of]
        values = ((strength * damping)[source_of] * weights(entities))[link_of]
        apart = targets != frontier[sources]
        raised, raised_values = best.offer(targets[apart], values[apart], np.zeros(int(apart.sum()), np.int64),
                                           frontier[sources][apart], entities[link_of][apart])
        if max_frontier > 0:
            keep = np.lexsort((raised, -raised_values))[:max_frontier]
            raised, raised_values = raised[keep], raised_values[keep]
        frontier, strength = raised, raised_values
    found = np.flatnonzero(best.reached)
    scores = dict(zip([chunk_ids[c] for c in found.tolist()], best.score[found].tolist()))
    bridges = [Bridge(entity_ids[source] if kind else chunk_ids[source], entity_ids[entity], chunk_ids[target], value)
               for target, value, (kind, source, entity) in zip(found.tolist(), best.score[found].tolist(),
                                                                best.way[found].tolist())]
    return scores, sorted(bridges, key=lambda b: (-b.score, b.target))


def outside_counts(counts: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Each entity's chunk count less its ``local`` mentions (those among the query's most
    relevant chunks), at least 1 where it has chunks: a name many chunks mention is a hub that
    says little about where a bridge leads, unless those chunks are what the query is about (a
    name that most of the relevant passages share is the question's topic, not a hub)."""
    return np.where(counts > 0, np.maximum(counts - local, 1), counts)


def _local_specificity(graph: Any, relevance: Mapping[str, float], local_pool: int, n_chunks: int,
                       exponent: float) -> Callable[[Iterable[str]], dict[str, float]]:
    """``relative_specificity`` through the store's lookups with ``outside_counts`` for the
    counts (the mentions among the ``local_pool`` most relevant chunks left out)."""
    local: dict[str, int] = {}
    for entities in graph.chunk_entities(top_ids(relevance, local_pool)).values():
        for entity in entities:
            local[entity] = local.get(entity, 0) + 1

    def weights(ids: Iterable[str]) -> dict[str, float]:
        if exponent == 0:
            return {}
        found = {e: len(c) for e, c in graph.entity_chunk_ids(list(ids)).items()}
        return {e: relative_value(max(n - local.get(e, 0), 1), n_chunks, exponent) for e, n in found.items() if n}
    return weights


def bridges_over(graph: Any, relevance: Mapping[str, float], seeds: dict[str, float], *, seed_chunks: int,
                 steps: int, damping: float, max_frontier: int, n_chunks: int,
                 specificity_exponent: float, local_pool: int = 0) -> tuple[dict[str, float], list[Bridge]]:
    """``bridge_scores`` weighted by the bridge entities' relative specificity among ``n_chunks``
    chunks raised to ``specificity_exponent`` (with ``local_pool``, their mentions among that many
    most relevant chunks left out of the count): on the store's link arrays where it has them, else
    through its entity and chunk lookups (the same result)."""
    links = getattr(graph, "link_arrays", None)
    if links is not None:
        return bridge_scores_on_arrays(links(), links(subjects=True), relevance, seeds, seed_chunks=seed_chunks,
                                       steps=steps, damping=damping, max_frontier=max_frontier, n_chunks=n_chunks,
                                       specificity_exponent=specificity_exponent, local_pool=local_pool)
    if local_pool > 0:
        weights = _local_specificity(graph, relevance, local_pool, n_chunks, specificity_exponent)
    else:
        def weights(ids: Iterable[str]) -> Mapping[str, float]:
            return relative_specificity(graph, ids, n_chunks, specificity_exponent)
    return bridge_scores(graph, relevance, seeds, seed_chunks=seed_chunks, steps=steps, damping=damping,
                         max_frontier=max_frontier, entity_weight=weights)
