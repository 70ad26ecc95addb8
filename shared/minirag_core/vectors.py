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
    collections larger than ``in_memory_limit`` are searched in the store.
    """

    IN_MEMORY = (CHUNKS, ENTITIES)

    def __init__(self, store: VectorStore, embedder: Embedder, in_memory_limit: int = 200_000) -> None:
        self.store = store
        self.embedder = embedder
        self.in_memory_limit = in_memory_limit
        self._lock = threading.Lock()
        self._matrices: dict[str, tuple[list[str], np.ndarray]] = {}

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

    def _invalidate(self, collection: str) -> None:
        with self._lock:
            self._matrices.pop(collection, None)

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

    def nearest(self, collection: str, vector: np.ndarray, k: int) -> list[tuple[str, float, dict[str, Any]]]:
        """Nearest ``k`` (id, cosine similarity, metadata); exact and in memory for chunks and
        entities (no metadata then), in the store otherwise."""
        in_memory = collection in self.IN_MEMORY and (
            collection in self._matrices or self.store.count(collection) <= self.in_memory_limit)
        if not in_memory:
            return self.store.query(collection, vector, k)
        ids, matrix = self.vectors(collection)
        if not ids or k <= 0:
            return []
        similarities = matrix @ vector
        top = np.argpartition(-similarities, min(k, len(ids)) - 1)[:k]
        top = top[np.lexsort((top, -similarities[top]))]
        return [(ids[i], float(similarities[i]), {}) for i in top]

    def chunk_vectors(self) -> tuple[list[str], np.ndarray]:
        return self.vectors(CHUNKS)

    def chunk_similarities(self, vector: np.ndarray) -> dict[str, float]:
        ids, matrix = self.chunk_vectors()
        if not ids:
            return {}
        return dict(zip(ids, (matrix @ vector).tolist()))
