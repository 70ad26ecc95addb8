"""Lexical chunk relevance with BM25 (``bm25s``): names, rare words and (normalised) dates
match literally."""

from __future__ import annotations

import logging
import re
import threading
from typing import Callable, Iterable, Protocol, Sequence

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from minirag_core.scores import ScoreTable
from minirag_core.extraction.temporal import DAY_FIRST, with_temporal_tokens

# bm25s sets its own logger to DEBUG on import, which floods any application's log handlers
logging.getLogger("bm25s").setLevel(logging.WARNING)


#: what the tokens depend on (a token cache written under another key is emptied)
TOKENISER_KEY = f"bm25s-en-stopwords+temporal+identifiers+bigrams:day_first={int(DAY_FIRST)}"
_IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
#: runs of a script written without spaces (Chinese, Japanese kana, Thai): read as character bigrams
_UNSPACED_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f]{2,}")


def _extra_tokens(text: str) -> str:
    bigrams = [run[i:i + 2] for run in _UNSPACED_RUN.findall(text) for i in range(len(run) - 1)]
    return " ".join(_IDENTIFIER.findall(text) + bigrams)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """BM25 tokens of each text: bm25s's English tokeniser and stopwords, plus canonical date tokens
    (which split underscores), each snake_case identifier kept whole (``field_validator`` matches
    as one word as well as its two parts) and the character bigrams of text in a script written
    without spaces (a whole Chinese sentence is otherwise one token that nothing matches)."""
    return bm25s.tokenize([with_temporal_tokens(t) + " " + _extra_tokens(t) for t in texts],
                          stopwords="en", show_progress=False, return_ids=False)


class TokenStore(Protocol):
    """Tokens kept between processes (``storage/token_cache.py``)."""

    def get(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]: ...

    def put(self, tokens: dict[str, list[str]]) -> None: ...


class LexicalChunkIndex:
    """BM25 over chunk texts, built in memory on first use.

    Each chunk's tokens are kept (chunk ids name their content, so they never go stale):
    after a write, ``refresh`` tokenises only the chunks it has not seen and rebuilds the
    scores from the kept tokens, a fraction of a full rebuild's cost.
    """

    def __init__(self, token_store: TokenStore | None = None) -> None:
        self.token_store = token_store
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._model: bm25s.BM25 | None = None
        self._position: dict[str, int] = {}
        self._tokens: dict[str, list[int]] = {}
        self._vocab: dict[str, int] = {}

    def build(self, texts: dict[str, str]) -> None:
        self.refresh(list(texts), lambda ids: {i: texts[i] for i in ids})

    def refresh(self, chunk_ids: Iterable[str], texts_of: Callable[[list[str]], dict[str, str]]) -> None:
        """Index exactly ``chunk_ids``; the token store, then ``texts_of``, are asked only for
        chunks not seen before (tokens made from texts go to the store)."""
        ids = sorted(chunk_ids)
        new = [i for i in ids if i not in self._tokens]
        found = self.token_store.get(new) if new and self.token_store is not None else {}
        missing = [i for i in new if i not in found]
        if missing:
            texts = texts_of(missing)
            missing = [i for i in missing if i in texts]
            made = dict(zip(missing, tokenize([texts[i] for i in missing])))
            if self.token_store is not None and made:
                self.token_store.put(made)
            found.update(made)
        vocab = self._vocab
        for chunk_id, tokens in found.items():
            self._tokens[chunk_id] = [vocab.setdefault(t, len(vocab)) for t in tokens]
        if len(self._tokens) > len(ids):  # chunks deleted since: forget their tokens
            keep = set(ids)
            self._tokens = {i: t for i, t in self._tokens.items() if i in keep}
        ids = [i for i in ids if i in self._tokens]
        model = None
        if ids:
            model = bm25s.BM25()
            model.index(Tokenized(ids=[self._tokens[i] for i in ids], vocab=dict(self._vocab)), show_progress=False)
        position = {c: i for i, c in enumerate(ids)}
        with self._lock:
            self._ids, self._model, self._position = ids, model, position

    def subset(self, chunk_ids: Iterable[str]) -> "LexicalChunkIndex":
        """BM25 over ``chunk_ids`` alone (their own document frequencies and lengths), from the
        tokens kept here: what an index of those chunks only would score."""
        part = LexicalChunkIndex()
        part._vocab = self._vocab
        part._tokens = {i: self._tokens[i] for i in chunk_ids if i in self._tokens}
        part.refresh(list(part._tokens), lambda ids: {})
        return part

    def mark_stale(self) -> None:
        """The chunks changed: the next ``refresh`` rebuilds (keeping the tokens it has)."""
        with self._lock:
            self._model = None

    @property
    def is_built(self) -> bool:
        return self._model is not None

    def scores(self, query: str) -> dict[str, float]:
        """BM25 score of every chunk that shares a term with the query."""
        table = self.table(query)
        if table is None:
            return {}
        return {table.ids[i]: float(table.scores[i]) for i in np.flatnonzero(table.scores > 0)}

    def table(self, query: str) -> ScoreTable | None:
        """BM25 score of every indexed chunk (0 where no term is shared), as one array; None
        when nothing is indexed or the query has no term."""
        with self._lock:
            ids, model, position = self._ids, self._model, self._position
        if model is None:
            return None
        tokens = tokenize([query])[0]
        if not tokens:
            return None
        return ScoreTable(ids, np.asarray(model.get_scores(tokens), dtype=np.float64), position)
