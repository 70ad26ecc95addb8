"""The retrievers a user would pick instead of MiniRAG, on the same chunks as the MiniRAG index:
BM25 (plain ``bm25s``, and with the project's tokeniser), dense top-k, and their
reciprocal-rank-fusion hybrid as LangChain's ``EnsembleRetriever`` computes it."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

RRF_C = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None,
                           c: int = RRF_C) -> list[tuple[str, float]]:
    """LangChain ``EnsembleRetriever.weighted_reciprocal_rank``: each list adds
    ``weight / (rank + c)`` (rank from 1) to an item; items sorted by the sum, first seen first on ties."""
    weights = list(weights) if weights is not None else [1.0 / len(rankings)] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (rank + c)
    order = {item: i for i, item in enumerate(dict.fromkeys(i for r in rankings for i in r))}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


class LexicalRanker:
    """BM25 over the chunk texts with ``bm25s`` (English stop words), optionally after a text
    preparation step (the project's tokeniser adds normalised date tokens)."""

    def __init__(self, texts: dict[str, str], prepare: Callable[[str], str] | None = None) -> None:
        import bm25s

        self._prepare = prepare or (lambda text: text)
        self.ids = sorted(texts)
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize([self._prepare(texts[i]) for i in self.ids], stopwords="en",
                                        show_progress=False), show_progress=False)

    def rank(self, query: str, n: int) -> list[str]:
        import bm25s

        tokens = bm25s.tokenize([self._prepare(query)], stopwords="en", show_progress=False, return_ids=False)[0]
        if not tokens:
            return []
        scores = np.asarray(self.model.get_scores(tokens))
        order = np.argsort(-scores, kind="stable")[:n]
        return [self.ids[i] for i in order if scores[i] > 0]


def dense_rank(index, query: str, n: int) -> list[str]:
    """Chunk ids by cosine similarity to the query (the index's own chunk vectors)."""
    scores = index.sources.chunk_dense_scores(index.embedder.embed([query])[0])
    return [c for c, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
