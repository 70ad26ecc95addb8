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
    """The project's three collections over any ``VectorStore``, with an in-memory copy
    of the chunk vectors for exact query-chunk similarities."""

    def __init__(self, store: VectorStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._lock = threading.Lock()
        self._chunk_matrix: tuple[list[str], np.ndarray] | None = None

    def upsert(self, collection: str, ids: Sequence[str], texts: Sequence[str],
               metadatas: Sequence[dict[str, Any]]) -> None:
        if not ids:
            return
        vectors = self.embedder.embed(list(texts))
        self.store.upsert(collection, ids, vectors, texts, metadatas)
        if collection == CHUNKS:
            self._invalidate()

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        if ids:
            self.store.delete(collection, list(ids))
            if collection == CHUNKS:
                self._invalidate()

    def _invalidate(self) -> None:
        with self._lock:
            self._chunk_matrix = None

    def nearest(self, collection: str, vector: np.ndarray, k: int) -> list[tuple[str, float, dict[str, Any]]]:
        return self.store.query(collection, vector, k)

    def chunk_vectors(self) -> tuple[list[str], np.ndarray]:
        """All chunk ids and vectors (loaded once from the store, refreshed after writes)."""
        with self._lock:
            if self._chunk_matrix is None:
                ids = sorted(self.store.ids(CHUNKS))
                found = self.store.get_embeddings(CHUNKS, ids) if ids else {}
                matrix = (np.stack([found[i] for i in ids]) if ids
                          else np.zeros((0, self.embedder.dim), dtype=np.float32))
                self._chunk_matrix = (ids, matrix)
            return self._chunk_matrix

    def chunk_similarities(self, vector: np.ndarray) -> dict[str, float]:
        ids, matrix = self.chunk_vectors()
        if not ids:
            return {}
        return dict(zip(ids, (matrix @ vector).tolist()))
