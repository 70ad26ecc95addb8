"""``ChromaVectorCache``: MiniRAG's graph vectors (text -> vector) kept in a Chroma collection, so a
new process answers its first query over a property graph without embedding the graph again.

The PG path embeds entity names, chunk windows and relation texts with its own model
(``PropertyGraphSources``); this cache holds them under ``sha1(model, text)`` ids with the
text as the document and the model's name as metadata, loads them once, and writes back
what a rebuild embedded or dropped (``flush``, called after each rebuild).
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Iterator

import numpy as np

__all__ = ["ChromaVectorCache", "COLLECTION"]

COLLECTION = "minirag_graph_vectors"
PAGE = 5_000  # ids per Chroma call (SQLite caps bound variables)


def _collection(target: Any) -> Any:
    """A Chroma collection from a collection, a LlamaIndex ``ChromaVectorStore`` or a folder."""
    if hasattr(target, "upsert") and hasattr(target, "get"):
        return target
    inner = getattr(target, "_collection", None)
    if inner is not None and hasattr(inner, "upsert"):
        return inner
    if isinstance(target, (str, Path)):
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(path=str(target), settings=Settings(anonymized_telemetry=False))
        return client.get_or_create_collection(COLLECTION, embedding_function=None, metadata={"hnsw:space": "cosine"})
    raise TypeError(f"vector_cache: expected a folder, a Chroma collection or a ChromaVectorStore, "
                    f"got {type(target).__name__}")


class ChromaVectorCache(MutableMapping):
    """Text -> vector for one embedding model, persisted in a Chroma collection (``target``: a
    folder, a ``chromadb`` collection or a LlamaIndex ``ChromaVectorStore``; use a collection
    of its own, not the one the index's ``vector_store`` searches)."""

    def __init__(self, target: Any, model: str) -> None:
        self.collection = _collection(target)
        self.model = model
        self._vectors: dict[str, np.ndarray] = {}
        self._added: dict[str, np.ndarray] = {}
        self._dropped: set[str] = set()
        offset = 0
        while True:
            page = self.collection.get(where={"model": model}, include=["embeddings", "documents"],
                                       limit=PAGE, offset=offset)
            for text, vector in zip(page["documents"], page["embeddings"]):
                self._vectors[text] = np.asarray(vector, dtype=np.float32)
            if len(page["ids"]) < PAGE:
                break
            offset += PAGE

    def _id(self, text: str) -> str:
        return hashlib.sha1(f"{self.model}\x00{text}".encode("utf-8")).hexdigest()

    def __getitem__(self, text: str) -> np.ndarray:
        return self._vectors[text]

    def __setitem__(self, text: str, vector: np.ndarray) -> None:
        self._vectors[text] = vector
        self._added[text] = vector
        self._dropped.discard(text)

    def __delitem__(self, text: str) -> None:
        del self._vectors[text]
        self._added.pop(text, None)
        self._dropped.add(text)

    def __iter__(self) -> Iterator[str]:
        return iter(self._vectors)

    def __len__(self) -> int:
        return len(self._vectors)

    def flush(self) -> None:
        """Write the vectors added and drop those removed since the last flush."""
        added, dropped = list(self._added.items()), sorted(self._dropped)
        for start in range(0, len(added), PAGE):
            page = added[start:start + PAGE]
            self.collection.upsert(ids=[self._id(t) for t, _ in page], documents=[t for t, _ in page],
                                   embeddings=[np.asarray(v, dtype=np.float32).tolist() for _, v in page],
                                   metadatas=[{"model": self.model}] * len(page))
        for start in range(0, len(dropped), PAGE):
            self.collection.delete(ids=[self._id(t) for t in dropped[start:start + PAGE]])
        self._added.clear()
        self._dropped.clear()
