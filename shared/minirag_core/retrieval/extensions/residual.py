"""Second-round bridging: what the best chunks leave unanswered.

After the first ranking, each of the top chunks (one per subject) answers part of the question.
The words of the question that chunk does not contain (its *residual*: "second pick 1999 draft"
once a chunk about the award is found) are asked as a query of their own (dense plus BM25, as in
the first round) of the chunks linked to it through an entity it mentions. A linked chunk scores
(source strength) x (link specificity) x (its residual relevance above the ``floor_rank``-th
chunk's, max-normalised), so the next hop of a chain is found by what it must add, not by what
the first hop already matched: a retrieval round without a model, as IRCoT's is with one.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Mapping

import numpy as np

from minirag_core.retrieval.extensions.bridging import Bridge
from minirag_core.storage.base import GraphView

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits)."""
    return [w.lower() for w in _WORD.findall(text)]


def residual_query(question: str, chunk_text: str) -> str:
    """The question's words that ``chunk_text`` does not contain, in question order."""
    present = set(words(chunk_text))
    return " ".join(w for w in words(question) if w not in present)


def link_specificity(entity_chunks: int, total_chunks: int) -> float:
    """An entity link's weight in [0, 1]: 1 for an entity in one chunk, falling with the log of
    how many chunks mention it (an entity in every chunk links nothing in particular)."""
    if entity_chunks <= 1 or total_chunks <= 1:
        return 1.0
    return max(0.0, 1.0 - math.log(entity_chunks) / math.log(total_chunks))


def distinct_sources(ranked: list[tuple[str, float]], subjects: Mapping[str, list[str]],
                     n: int) -> list[tuple[str, float]]:
    """The ``n`` best chunks of a ranking, one per subject (clones of one topic leave one
    residual), with their scores divided by the best score."""
    peak = ranked[0][1] if ranked and ranked[0][1] > 0 else 1.0
    chosen: list[tuple[str, float]] = []
    covered: set[str] = set()
    for chunk, score in ranked:
        about = set(subjects.get(chunk) or [chunk])
        if len(chosen) >= n:
            break
        if not covered & about:
            chosen.append((chunk, max(score, 0.0) / peak))
            covered |= about
    return chosen


def residual_scores(graph: GraphView, question: str, sources: list[tuple[str, float]],
                    relevance_of: Callable[[list[str]], list[Mapping[str, float]]],
                    total_chunks: int, floor_rank: int = 0) -> tuple[dict[str, float], list[Bridge]]:
    """Score per chunk reached from ``sources`` ((chunk id, strength in [0, 1]) of the first
    round) and, per reached chunk, the strongest bridge that reached it. ``relevance_of`` scores
    every chunk against each of several query texts (one mapping per text). Relevance is counted
    above the ``floor_rank``-th best chunk's (0: above zero), so only the chunks that stand out
    for the residual score."""
    if not sources:
        return {}, []
    texts = {c: a.get("text", "") for c, a in graph.chunks([c for c, _ in sources]).items()}
    residuals = [residual_query(question, texts.get(c, "")) for c, _ in sources]
    live = [i for i, r in enumerate(residuals) if r]
    if not live:
        return {}, []
    tables = dict(zip(live, relevance_of([residuals[i] for i in live])))
    mentions = graph.chunk_entities([c for c, _ in sources])
    links = graph.entity_chunk_ids(sorted({e for es in mentions.values() for e in es}))
    scores: dict[str, float] = {}
    best: dict[str, Bridge] = {}
    for i in live:
        source, strength = sources[i]
        table = tables[i]
        values = np.asarray(list(_values(table)), dtype=np.float64)
        if not len(values):
            continue
        top = float(values.max())
        floor = float(np.sort(values)[-floor_rank]) if 0 < floor_rank <= len(values) else 0.0
        if top <= floor:
            continue
        for entity in mentions.get(source, ()):
            linked = links.get(entity, [])
            weight = strength * link_specificity(len(linked), total_chunks)
            if weight <= 0:
                continue
            for chunk in (c for c in linked if c != source):
                value = weight * max(table.get(chunk, 0.0) - floor, 0.0) / (top - floor)
                if value > scores.get(chunk, 0.0):
                    scores[chunk] = value
                    best[chunk] = Bridge(source, entity, chunk, value)
    return scores, sorted(best.values(), key=lambda b: (-b.score, b.target))


def _values(table: Mapping[str, float]) -> Iterable[float]:
    """Every score of a mapping (a ``ScoreTable``'s array as it is)."""
    scores = getattr(table, "scores", None)
    return scores if scores is not None else table.values()
