"""Lexical chunk relevance with BM25 (``bm25s``): names, rare words and (normalised) dates
match literally."""

from __future__ import annotations

import logging
import threading

import bm25s
import numpy as np

from .temporal import with_temporal_tokens

# bm25s sets its own logger to DEBUG on import, which floods any application's log handlers
logging.getLogger("bm25s").setLevel(logging.WARNING)


class LexicalChunkIndex:
    """BM25 over chunk texts, built in memory on first use (milliseconds for thousands)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._model: bm25s.BM25 | None = None

    def build(self, texts: dict[str, str]) -> None:
        ids = sorted(texts)
        model = None
        if ids:
            model = bm25s.BM25()
            model.index(bm25s.tokenize([with_temporal_tokens(texts[i]) for i in ids], stopwords="en", show_progress=False),
                        show_progress=False)
        with self._lock:
            self._ids, self._model = ids, model

    @property
    def is_built(self) -> bool:
        return self._model is not None

    def scores(self, query: str) -> dict[str, float]:
        """BM25 score of every chunk that shares a term with the query."""
        with self._lock:
            ids, model = self._ids, self._model
        if model is None:
            return {}
        tokens = bm25s.tokenize([with_temporal_tokens(query)], stopwords="en", show_progress=False, return_ids=False)[0]
        if not tokens:
            return {}
        values = np.asarray(model.get_scores(tokens))
        return {ids[i]: float(values[i]) for i in np.flatnonzero(values > 0)}
