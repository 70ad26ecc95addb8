"""Sec. 3.1 vectors: what is embedded into which collection, computed by this project.

Collections: ``entities`` (entity names), ``chunks`` (chunk text joined with the
descriptions on its entity-chunk edges, the text MiniRAG ranks chunks on) and
``relations`` (relation keywords and descriptions, for light mode).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Iterable, Sequence

import numpy as np

from .embedding.base import Embedder
from .scores import ScoreTable, similarities
from .storage.base import VectorStore

ENTITIES, CHUNKS, RELATIONS = "entities", "chunks", "relations"
GENERIC_RELATION_KEYWORDS = {"co-occurrence", "conversation", "session time", ""}


def relation_vector_id(source: str, target: str) -> str:
    key = f"{min(source, target)}\x00{max(source, target)}"
    return "rel-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def chunk_ranking_text(text: str, descriptions: Iterable[str]) -> str:
    """The chunk joined with the entity-chunk descriptions it does not already contain."""
    extra = [d for d in dict.fromkeys(descriptions) if d and d not in text]
    return text if not extra else text + "\n" + "\n".join(extra)


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

    def upsert(self, collection: str, ids: Sequence[str], texts: Sequence[str],
               metadatas: Sequence[dict[str, Any]]) -> None:
        if not ids:
            return
        vectors = self.embedder.embed(list(texts))
        self.store.upsert(collection, ids, vectors, texts, metadatas)
        self._invalidate(collection)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        if ids:
            self.store.delete(collection, list(ids))
            self._invalidate(collection)

    def forget(self) -> None:
        """Drop every in-memory matrix (another process changed the store)."""
        with self._lock:
            self._matrices.clear()
            self._positions.clear()
            self._counts.clear()

    def _invalidate(self, collection: str) -> None:
        with self._lock:
            self._matrices.pop(collection, None)
            self._positions.pop(collection, None)
            self._counts.pop(collection, None)

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
        found = similarities(matrix, vector)
        top = np.argpartition(-found, min(k, len(ids)) - 1)[:k]
        top = top[np.lexsort((top, -found[top]))]
        return [(ids[i], float(found[i]), {}) for i in top]

    def chunk_vectors(self) -> tuple[list[str], np.ndarray]:
        return self.vectors(CHUNKS)

    def chunk_similarities(self, vector: np.ndarray) -> ScoreTable:
        """Cosine similarity of ``vector`` to every chunk (in memory), or to the ``ann_chunks``
        nearest ones by the store's ANN index past ``in_memory_limit``."""
        if not self.in_memory(CHUNKS):
            found = sorted((i, s) for i, s, _ in self.store.query(CHUNKS, vector, self.ann_chunks))
            return ScoreTable([i for i, _ in found], np.array([s for _, s in found], dtype=np.float64))
        ids, matrix, position = self.position(CHUNKS)
        if not ids:
            return ScoreTable([], np.zeros(0), {})
        return ScoreTable(ids, similarities(matrix, vector), position)
