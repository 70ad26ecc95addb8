"""Sec. 3.2.2, retrieval of query-relevant chunks: filter the chunks reached by reasoning
paths to those also relevant to the query, rank them, and fit the top ones in a budget."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from minirag_core.scores import ScoreTable, same_ids


@dataclass(frozen=True)
class RankWeights:
    dense: float
    lexical: float
    graph: float


def max_normalised(scores: dict[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {k: 0.0 for k in scores}


def specificity(entity_chunks: int, total_chunks: int, use_idf: bool = True) -> float:
    """How much a link to this entity says about a chunk: an entity in every chunk (the
    corpus's protagonist) says nothing, a rare one a lot (inverse document frequency)."""
    if not use_idf or entity_chunks == 0:
        return 1.0
    return math.log(1.0 + max(total_chunks, entity_chunks) / entity_chunks)


#: an entity linked to more than this share of the chunks (and to more than HUB_MIN_CHUNKS) is a hub
HUB_SHARE = 0.05
HUB_MIN_CHUNKS = 10


def hub_entities(links: Mapping[str, Sequence[str]], total_chunks: int) -> tuple[set[str], dict[str, float]]:
    """(hub entities, each entity's specificity relative to an entity of one chunk, 0-1)."""
    return hubs_by_count({e: len(chunks) for e, chunks in links.items()}, total_chunks)


def hubs_by_count(counts: Mapping[str, int], total_chunks: int) -> tuple[set[str], dict[str, float]]:
    """``hub_entities`` from each entity's number of linked chunks."""
    hubs = {e for e, n in counts.items() if n > max(HUB_MIN_CHUNKS, HUB_SHARE * total_chunks)}
    return hubs, {e: relative_value(n, total_chunks) for e, n in counts.items() if n}


@lru_cache(maxsize=65536)
def relative_value(entity_chunks: int, total_chunks: int, exponent: float = 1.0) -> float:
    """The specificity of an entity of ``entity_chunks`` chunks (at least one) relative to an
    entity of one chunk, raised to ``exponent``."""
    top = specificity(1, max(total_chunks, 1))
    return (specificity(entity_chunks, max(total_chunks, 1)) / top) ** exponent


def relative_values(counts: np.ndarray, total_chunks: int, exponent: float = 1.0) -> np.ndarray:
    """``relative_value`` of each count (1.0 for 0: an entity without chunks weighs 1)."""
    if not len(counts):
        return np.ones(0, dtype=np.float64)
    distinct, inverse = np.unique(counts, return_inverse=True)
    values = [relative_value(n, total_chunks, exponent) if n else 1.0 for n in distinct.tolist()]
    return np.array(values, dtype=np.float64)[inverse.reshape(-1)]


def relative_specificity(graph: Any, entity_ids: Iterable[str], total_chunks: int,
                         exponent: float = 1.0) -> dict[str, float]:
    """Each entity's specificity relative to an entity of one chunk (0-1), from the chunks it
    links to, raised to ``exponent`` (0: every entity 1): how much passing through it says about
    where it leads."""
    if exponent == 0:
        return {}
    link_arrays = getattr(graph, "link_arrays", None)
    if link_arrays is not None:  # the counts as one array lookup
        links = link_arrays()
        rows = {e: links.entity_position.get(e, -1) for e in entity_ids}
        known = [e for e, row in rows.items() if row >= 0]
        counts = links.counts[np.array([rows[e] for e in known], dtype=np.int64)]
        values = relative_values(counts, total_chunks, exponent).tolist()
        return {e: v for e, v, n in zip(known, values, counts.tolist()) if n}
    counts = getattr(graph, "entity_chunk_counts", None)
    if counts is not None:
        found = counts(list(entity_ids))
    else:
        found = {e: len(chunks) for e, chunks in graph.entity_chunk_ids(list(entity_ids)).items()}
    return {e: relative_value(n, total_chunks, exponent) for e, n in found.items() if n}


def query_relevance(dense: Mapping[str, float], lexical: Mapping[str, float],
                    weights: RankWeights) -> Mapping[str, float]:
    """Query-chunk relevance without the graph: dense similarity plus normalised BM25
    (``lexical`` may be a ``ScoreTable`` holding 0 for chunks without a shared term)."""
    if isinstance(lexical, ScoreTable):
        if isinstance(dense, ScoreTable) and same_ids(dense, lexical):  # one array operation
            peak = lexical.scores.max(initial=0.0)
            scaled = lexical.scores / peak if peak > 0 else np.zeros(len(lexical.scores))
            return ScoreTable(dense.ids, weights.dense * dense.scores + weights.lexical * scaled, dense.position)
        lexical = {lexical.ids[i]: float(lexical.scores[i]) for i in np.flatnonzero(lexical.scores > 0)}
    lexical_n = max_normalised(lexical)
    if isinstance(dense, ScoreTable):  # one array operation instead of a dict over every chunk
        table = dense.plus(lexical_n, weights.lexical, weights.dense)
        if table is not None:
            return table
    ids = set(dense) | set(lexical_n)
    return {c: weights.dense * dense.get(c, 0.0) + weights.lexical * lexical_n.get(c, 0.0) for c in ids}


def rank_chunks(relevance: Mapping[str, float], graph_scores: dict[str, float], candidate_pool: list[str],
                weights: RankWeights, base: Sequence[str] = ()) -> list[tuple[str, float]]:
    """Step 1-3: the graph-free ranking ``base`` (chunk ids by ``relevance``) with the eq. 3 term
    added to the chunks that are both on a reasoning path and in the query-relevant pool; path
    chunks outside ``base`` join it. A chunk without graph evidence keeps its own score, so it
    stays above a path chunk whose graph term does not make up for the difference."""
    graph_n = max_normalised(graph_scores)
    pool = set(candidate_pool)
    scores = {c: float(relevance.get(c, 0.0)) for c in base}
    for chunk, value in graph_n.items():
        if chunk in pool:
            scores[chunk] = float(relevance.get(chunk, 0.0)) + weights.graph * value
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def add_bridges(ranked: list[tuple[str, float]], relevance: Mapping[str, float], graph_scores: dict[str, float],
                bridged: dict[str, float], weights: RankWeights, bridge_weight: float) -> list[tuple[str, float]]:
    """Add the bridge term: ranked chunks gain it, chunks reached only through a bridge join the
    ranking (even when their own similarity to the query is low)."""
    if not bridged:
        return ranked
    graph_n = max_normalised(graph_scores)
    scores = {c: s + bridge_weight * bridged.get(c, 0.0) for c, s in ranked}
    for chunk, value in bridged.items():
        if chunk not in scores:
            scores[chunk] = relevance.get(chunk, 0.0) + weights.graph * graph_n.get(chunk, 0.0) + bridge_weight * value
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def spread_documents(ranked: list[tuple[str, float]], relevance: Mapping[str, float], doc_of: Mapping[str, str],
                     share: float) -> list[tuple[str, float]]:
    """The graph's evidence counted once per document: walking ``ranked`` in order, a document's
    first chunk keeps its score, each later chunk of it keeps only ``share`` of what the graph
    added above its own ``relevance`` (1: unchanged). A page's sections often all sit one link from
    the same chunks, so without this its second section outranks another page on the strength of
    evidence its first already carries. Chunks without a document in ``doc_of`` are unchanged."""
    if share >= 1.0:
        return ranked
    seen: set[str] = set()
    scores = []
    for chunk, score in ranked:
        doc = doc_of.get(chunk)
        own = float(relevance.get(chunk, 0.0))
        if doc is not None and doc in seen and score > own:
            score = own + share * (score - own)
        if doc is not None:
            seen.add(doc)
        scores.append((chunk, score))
    return sorted(scores, key=lambda item: (-item[1], item[0]))


def lifted_above(ranked: list[tuple[str, float]], prior: Mapping[str, float]) -> set[str]:
    """The chunks of ``ranked`` placed above a chunk that scores higher by ``prior`` (the query
    relevance, say): what the added evidence, not the prior score, ranked where it is."""
    lifted: set[str] = set()
    best_below = float("-inf")
    for chunk, _ in reversed(ranked):  # the most relevant chunk ranked below each one
        own = float(prior.get(chunk, 0.0))
        if own < best_below:
            lifted.add(chunk)
        best_below = max(best_below, own)
    return lifted


def fit_budget(ranked: list[tuple[str, float]], n_tokens: dict[str, int], top_k: int,
               token_budget: int) -> list[tuple[str, float]]:
    """Take chunks in rank order, at most ``top_k``, skipping any that would exceed the budget."""
    chosen, used = [], 0
    for chunk_id, score in ranked:
        if len(chosen) >= top_k:
            break
        cost = n_tokens.get(chunk_id, 0)
        if used + cost > token_budget:
            continue
        chosen.append((chunk_id, score))
        used += cost
    return chosen
