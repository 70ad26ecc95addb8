"""Sec. 3.1 vectors: what is embedded into which collection, computed by this project.

Collections: ``entities`` (entity names), ``chunks`` (chunk text joined with the
descriptions on its entity-chunk edges, the text MiniRAG ranks chunks on) and
``relations`` (relation keywords and descriptions, for light mode).

A chunk longer than the embedding model reads is embedded as windows that fit it
(``embedding.windows``): ``chunks`` holds its first window's vector under the chunk id,
``chunk_windows`` the others (metadata ``chunk``), and a chunk's dense score is that of its
best window.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any, Iterable, Sequence

import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.graph.records import DESCRIPTION_SEPARATOR
from minirag_core.scores import ScoreTable, similarities, similarities_each
from minirag_core.embedding.windows import embed_windows
from minirag_core.storage.base import VectorStore
from minirag_core.types import GENERIC_RELATION_KEYWORDS as _GENERIC

ENTITIES, CHUNKS, RELATIONS, WINDOWS = "entities", "chunks", "relations", "chunk_windows"
GENERIC_RELATION_KEYWORDS = set(_GENERIC)


def relation_vector_id(source: str, target: str) -> str:
    key = f"{min(source, target)}\x00{max(source, target)}"
    return "rel-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def window_id(chunk_id: str, number: int) -> str:
    """Id of a chunk's window ``number`` (1 = the second; the first is stored under the chunk id)."""
    return f"{chunk_id}#w{number}"


def window_owner(vector_id: str) -> str:
    """The chunk a window id belongs to."""
    return vector_id.rsplit("#w", 1)[0]


#: a run of the chunk's words counts as quoted from this length (or where it ends a piece)
_QUOTED_RUN_WORDS = 3
#: a description says nothing new when this share of its words are quoted runs of the chunk: all
#: (at 0.75, chat descriptions, which name a speaker in full where the chunk has a joined label, were
#: dropped too, and the chat development set's mini recall@5 fell from 94.4 to 91.0)
_QUOTED_SHARE = 1.0
_WORD = re.compile(r"\w+")
_CUT_OR_SEPARATOR = re.compile(re.escape(DESCRIPTION_SEPARATOR) + "|…")
#: descriptions add at most this share of the chunk's length to its ranking text (cut at a word):
#: past it they outweigh the chunk in its vector, and cost windows (chat development set, tune
#: half, mini / naive recall@5: no bound 93.6 / 79.4, a share of 0.5 95.1 / 80.9, 0.35 94.6 / 79.2;
#: 900 characters at most, whatever the chunk's length, 94.6 / 78.9)
RANKING_EXTRA_SHARE = 0.5


def _words(text: str) -> list[str]:
    """Lower-cased word characters only: markup (Markdown's ``**``, backticks, "#") and spacing
    differ between a chunk and the sentences an extractor quotes from it."""
    return _WORD.findall(text.lower())


def _quoted_share(description: str, words_text: str) -> float:
    """The share of ``description``'s words that lie in runs of ``words_text`` (the chunk's
    ``_words`` joined and padded with spaces) of 3+ words, or that end a piece: pieces are split
    at " | " and at "…", where an extractor cut a sentence short (and may go on with the next)."""
    quoted = total = 0
    for piece in _CUT_OR_SEPARATOR.split(description):
        words = _words(piece)
        total += len(words)
        i = 0
        while i < len(words):  # the longest run from word i (being a run is monotone in length)
            low, high = 0, len(words) - i
            while low < high:
                mid = (low + high + 1) // 2
                end = " " if i + mid < len(words) else ""  # a piece's last word may be cut ("…")
                low, high = (mid, high) if f" {' '.join(words[i:i + mid])}{end}" in words_text else (low, mid - 1)
            if low >= _QUOTED_RUN_WORDS or (low and i + low == len(words)):
                quoted += low
                i += low
            else:
                i += 1
    return quoted / total if total else 1.0


def chunk_ranking_text(text: str, descriptions: Iterable[str]) -> str:
    """The chunk joined with the entity-chunk descriptions that say more than it: one that only
    quotes the chunk (an offline extractor's sentences, markup aside) adds nothing to its vector
    but length, and is left out; the rest add up to ``RANKING_EXTRA_SHARE`` of its length."""
    words_text = f" {' '.join(_words(text))} "
    extra = "\n".join(d for d in dict.fromkeys(descriptions)
                      if d and d not in text and _quoted_share(d, words_text) < _QUOTED_SHARE)
    bound = RANKING_EXTRA_SHARE * len(text)
    if len(extra) > bound:  # cut at the last word that fits
        kept = extra[:int(bound) + 1].rsplit(None, 1)
        extra = kept[0] if bound >= 1 and kept else ""
    return text if not extra else text + "\n" + extra


RELATION_TEXT_CHARS = 120


def relation_has_meaning(keywords: str) -> bool:
    """Whether a relation says more than "these two co-occur": only those get a vector.

    Co-occurrence edges of the offline extractor carry only generic keywords; embedding
    them would cost more than all chunks together and match nothing but their two names.
    """
    return not {k.strip() for k in keywords.split(",")} <= GENERIC_RELATION_KEYWORDS


def relation_vector_text(source_name: str, target_name: str, keywords: str, description: str) -> str:
    """Names, keywords and the start of the description, short so that embedding stays cheap
    and the text (and its vector) stops changing once an edge has its first description."""
    return f"{source_name} - {target_name}: {keywords}. {description[:RELATION_TEXT_CHARS]}"


def _top_rows(ids: list[str], found: np.ndarray, k: int) -> list[tuple[str, float, dict[str, Any]]]:
    """The ``k`` best of ``found`` (a similarity per id), best first, ties by row."""
    top = _distinct_top(found, k) if 0 < k * SAMPLE_STRIDE < len(ids) else None
    if top is None:  # the k-th value is tied: the partition chooses among the ties
        top = np.argpartition(-found, min(k, len(ids)) - 1)[:k]
    top = top[np.lexsort((top, -found[top]))]
    return [(ids[i], float(found[i]), {}) for i in top]


#: every how many rows ``_distinct_top`` samples for its cut-off
SAMPLE_STRIDE = 8


def _distinct_top(values: np.ndarray, k: int) -> np.ndarray | None:
    """The rows of the ``k`` largest ``values`` when no row outside them ties the ``k``-th (any
    selection then picks these), else None; only rows at or above the ``k``-th largest of a
    sample of every ``SAMPLE_STRIDE``-th row (a bound below the ``k``-th of all) are sorted."""
    sample = values[::SAMPLE_STRIDE]
    cutoff = np.partition(sample, len(sample) - k)[len(sample) - k]
    rows = np.flatnonzero(values >= cutoff)
    if len(rows) < k:  # NaN values
        return None
    order = np.argsort(-values[rows], kind="stable")
    if len(rows) > k and values[rows[order[k]]] == values[rows[order[k - 1]]]:
        return None
    return rows[order[:k]]


class VectorIndex:
    """The project's three collections over any ``VectorStore``.

    Chunk and entity vectors are also held in memory (loaded once from the store, dropped
    after a write to their collection) for exact similarities without a store round trip;
    collections larger than their limit are searched in the store (its approximate
    nearest-neighbour index, HNSW in Chroma), chunks then scored for their ``ann_chunks``
    nearest only. A query reads a whole in-memory matrix once per vector searched (memory
    bound: ~15 ms per 100k x 384 floats here), so entities, several per query and ten per
    chunk, switch to the ANN index first.
    """

    IN_MEMORY = (CHUNKS, ENTITIES)

    def __init__(self, store: VectorStore, embedder: Embedder, in_memory_limit: int = 200_000,
                 ann_chunks: int = 1000, entity_limit: int = 50_000) -> None:
        self.store = store
        self.embedder = embedder
        self.in_memory_limit = in_memory_limit
        self.entity_limit = entity_limit
        self.ann_chunks = ann_chunks
        self._lock = threading.Lock()
        self._matrices: dict[str, tuple[list[str], np.ndarray]] = {}
        self._positions: dict[str, dict[str, int]] = {}
        self._counts: dict[str, int] = {}
        self._window_rows: tuple[np.ndarray, np.ndarray] | None = None
        self._window_ids: set[str] | None = None

    def upsert(self, collection: str, ids: Sequence[str], texts: Sequence[str],
               metadatas: Sequence[dict[str, Any]]) -> None:
        if not ids:
            return
        if collection == CHUNKS:
            self._upsert_chunks(ids, texts, metadatas)
            return
        vectors = self.embedder.embed(list(texts))
        self.store.upsert(collection, ids, vectors, texts, metadatas)
        self._invalidate(collection)

    def _upsert_chunks(self, ids: Sequence[str], texts: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> None:
        """Every window of every chunk: later windows first, so a stored chunk vector means its
        windows are stored too (a crash in between leaves the chunk missing, and repair redoes it)."""
        vectors, owners = embed_windows(self.embedder, texts)
        first = np.searchsorted(owners, np.arange(len(ids)))
        later = np.setdiff1d(np.arange(len(owners)), first)
        if len(later):
            numbers = later - first[owners[later]]
            window_ids = [window_id(ids[o], int(k)) for o, k in zip(owners[later], numbers)]
            self.store.upsert(WINDOWS, window_ids, vectors[later], [""] * len(later),
                              [{"chunk": ids[o]} for o in owners[later]])
            self.window_ids().update(window_ids)
        self.store.upsert(CHUNKS, ids, vectors[first], texts, metadatas)
        self._invalidate(CHUNKS)

    def window_ids(self) -> set[str]:
        """Ids of every stored window vector (read from the store once, then kept up to date)."""
        if self._window_ids is None:
            self._window_ids = self.store.ids(WINDOWS) if self.store.count(WINDOWS) else set()
        return self._window_ids

    def delete_windows(self, chunk_ids: Iterable[str]) -> None:
        """Drop the window vectors of ``chunk_ids`` (those stored)."""
        wanted = set(chunk_ids)
        stored = self.window_ids() if wanted else set()
        dead = sorted(w for w in stored if window_owner(w) in wanted)
        if dead:
            self.store.delete(WINDOWS, dead)
            stored.difference_update(dead)
            self._invalidate(WINDOWS)

    def stored_texts(self, collection: str, ids: Sequence[str]) -> dict[str, str]:
        """The texts the store holds for ``ids`` (those present): what their vectors embed. A
        store without ``get_documents`` (written before it joined the protocol) reports none."""
        read = getattr(self.store, "get_documents", None)
        return read(collection, list(ids)) if ids and read is not None else {}

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        if ids:
            if collection == CHUNKS:
                self.delete_windows(ids)
            elif collection == WINDOWS and self._window_ids is not None:
                self._window_ids.difference_update(ids)
            self.store.delete(collection, list(ids))
            self._invalidate(collection)

    def forget(self) -> None:
        """Drop every in-memory matrix (another process changed the store)."""
        with self._lock:
            self._matrices.clear()
            self._positions.clear()
            self._counts.clear()
            self._window_rows = None
            self._window_ids = None

    def _invalidate(self, collection: str) -> None:
        with self._lock:
            self._matrices.pop(collection, None)
            self._positions.pop(collection, None)
            self._counts.pop(collection, None)
            if collection in (CHUNKS, WINDOWS):
                self._matrices.pop(WINDOWS, None)
                self._window_rows = None

    def vectors(self, collection: str) -> tuple[list[str], np.ndarray]:
        """All ids and vectors of a collection, from memory (loaded from the store on first use)."""
        with self._lock:
            if collection not in self._matrices:
                self._matrices[collection] = self._load(collection)
            return self._matrices[collection]

    def _load(self, collection: str) -> tuple[list[str], np.ndarray]:
        """Ids (sorted) and their vectors, read in pages or id slices the store can bind."""
        read_all = getattr(self.store, "all_embeddings", None)
        if read_all is not None:
            found_ids, found = read_all(collection)
            rows = dict(zip(found_ids, range(len(found_ids))))  # last copy wins if a page repeats
            ids = sorted(rows)
            matrix = found[[rows[i] for i in ids]] if ids else None
        else:
            ids = sorted(self.store.ids(collection))
            vectors = self.store.get_embeddings(collection, ids) if ids else {}
            matrix = np.stack([vectors[i] for i in ids]) if ids else None
        if matrix is None:
            return [], np.zeros((0, self.embedder.dim), dtype=np.float32)
        return ids, np.ascontiguousarray(matrix, dtype=np.float32)

    def position(self, collection: str) -> tuple[list[str], np.ndarray, dict[str, int]]:
        """Ids, vectors and id -> row of an in-memory collection."""
        ids, matrix = self.vectors(collection)
        with self._lock:
            found = self._positions.get(collection)
            if found is None or len(found) != len(ids):
                found = self._positions[collection] = {c: i for i, c in enumerate(ids)}
            return ids, matrix, found

    def in_memory(self, collection: str) -> bool:
        """Whether ``collection`` is searched exactly in memory (else in the store's ANN index)."""
        if collection not in self.IN_MEMORY:
            return False
        limit = min(self.in_memory_limit, self.entity_limit) if collection == ENTITIES else self.in_memory_limit
        count = self._counts.get(collection)
        if count is None:
            count = self._counts[collection] = self.store.count(collection)
        return count <= limit

    def nearest(self, collection: str, vector: np.ndarray, k: int) -> list[tuple[str, float, dict[str, Any]]]:
        """Nearest ``k`` (id, cosine similarity, metadata); exact and in memory for chunks and
        entities (no metadata then), in the store otherwise."""
        if not self.in_memory(collection):
            return self.store.query(collection, vector, k)
        ids, matrix = self.vectors(collection)
        if not ids or k <= 0:
            return []
        return _top_rows(ids, similarities(matrix, vector), k)

    def nearest_many(self, collection: str, vectors: np.ndarray, k: int,
                     metadata: bool = True) -> list[list[tuple[str, float, dict[str, Any]]]]:
        """``nearest`` for each of ``vectors``; one store call where the store takes several
        (``metadata=False``: the caller reads ids and similarities only)."""
        if not self.in_memory(collection):
            many = getattr(self.store, "query_many", None)
            if many is not None and len(vectors) > 1:
                return many(collection, vectors, k, metadata=metadata)
            return [self.nearest(collection, v, k) for v in vectors]
        ids, matrix = self.vectors(collection)
        if not ids or k <= 0 or len(vectors) == 0:
            return [[] for _ in vectors]
        # one pass over the matrix for all vectors: the product is memory-bound
        table = similarities_each(matrix, np.asarray(vectors, dtype=np.float32))
        return [_top_rows(ids, row, k) for row in table]

    def chunk_vectors(self) -> tuple[list[str], np.ndarray]:
        return self.vectors(CHUNKS)

    def chunk_windows(self) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of every chunk's later windows, sorted by chunk, and the row of
        ``chunk_vectors`` each belongs to (windows of unknown chunks left out)."""
        ids, _ = self.chunk_vectors()
        with self._lock:
            cached = self._window_rows
        if cached is not None:
            return cached
        window_ids, matrix = self.vectors(WINDOWS) if self.store.count(WINDOWS) else ([], None)
        rows = {c: r for r, c in enumerate(ids)}
        owners = np.array([rows.get(window_owner(w), -1) for w in window_ids], dtype=np.int64)
        keep = np.flatnonzero(owners >= 0)
        keep = keep[np.argsort(owners[keep], kind="stable")]
        cached = (matrix[keep] if matrix is not None else np.zeros((0, self.embedder.dim), np.float32), owners[keep])
        with self._lock:
            self._window_rows = cached
        return cached

    def chunk_similarities(self, vector: np.ndarray, where: dict[str, Any] | None = None,
                           n: int | None = None) -> ScoreTable:
        """Cosine similarity of ``vector`` to each chunk's best window (in memory), or to the
        ``ann_chunks`` (or ``n``) nearest chunks by the store's ANN index past ``in_memory_limit``
        (those whose metadata pass ``where``, a store filter on ``doc_id``; in memory neither is read)."""
        if not self.in_memory(CHUNKS):
            found = sorted((i, s) for i, s, _ in self.store.query(CHUNKS, vector, n or self.ann_chunks, where=where))
            return ScoreTable([i for i, _ in found], np.array([s for _, s in found], dtype=np.float64))
        ids, matrix, position = self.position(CHUNKS)
        if not ids:
            return ScoreTable([], np.zeros(0), {})
        scores = similarities(matrix, vector)
        windows, rows = self.chunk_windows()
        if len(rows):
            np.maximum.at(scores, rows, similarities(windows, vector).astype(scores.dtype))
        return ScoreTable(ids, scores, position)
