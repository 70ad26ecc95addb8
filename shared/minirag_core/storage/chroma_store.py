"""Vectors in Chroma: embedded (``PersistentClient``) by default, or a server by URL.

Collections are created with ``embedding_function=None``: this project always computes
the embeddings, so Chroma never downloads its default model.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlparse

import numpy as np

from minirag_core.storage.base import atomic_write_json, read_json
from minirag_core.storage.locations import StoreMismatch, StoreUnreachable
from minirag_core.storage.namespaces import namespaced

#: ids per call: SQLite caps bound variables per statement (32,766, or 999 on old builds),
#: and Chroma binds one per id
_BATCH = 2000
#: rows per page when reading a whole collection
_PAGE = 5000


SERVER_FILE = "chroma_server.json"
LOCAL_FOLDER = "chroma"


def workdir_prefix(workdir: Path | None) -> str:
    """Collection-name prefix on a Chroma server, own to this workdir (kept in its
    ``chroma_server.json``): with one shared prefix, opening one index would make ``repair``
    delete every other index's vectors on the same server."""
    if workdir is None:
        return f"minirag-{uuid.uuid4().hex[:12]}"
    found = read_json(workdir / SERVER_FILE, None)
    if found is not None:
        return str(found["collection_prefix"])
    # a workdir with a graph but no local vectors was built on a server with the old shared prefix
    legacy = (workdir / "graph.json").exists() and not (workdir / LOCAL_FOLDER).exists()
    return "minirag" if legacy else f"minirag-{uuid.uuid4().hex[:12]}"


def open_vector_store(workdir: Path | None, url: str | None = None,
                      namespace: str | None = None) -> "ChromaVectorStore":
    """The workdir's vectors: embedded in ``chroma/``, or on the Chroma server at ``url``. A workdir
    built on a server is refused without its URL (and an embedded one with a URL) instead of being
    re-embedded elsewhere; the server is recorded in ``chroma_server.json`` once it answered.
    With a ``namespace`` the collections are that namespace's (``storage/namespaces.py``)."""
    record = read_json(workdir / SERVER_FILE, None) if workdir is not None else None
    if not url:
        if record is not None:
            where = f" at {record['url']}" if record.get("url") else ""
            raise StoreMismatch(f"{workdir} keeps its vectors on a Chroma server{where}: open it with {{chroma_url}}",
                                chroma_url=record.get("url") or "http://HOST:PORT")
        return ChromaVectorStore(workdir / LOCAL_FOLDER if workdir is not None else None, namespace=namespace)
    if workdir is not None and record is None and (workdir / LOCAL_FOLDER).exists():
        raise StoreMismatch(f"{workdir} keeps its vectors in {LOCAL_FOLDER}/ (embedded Chroma): open it without "
                            "{chroma_url}, or index into a new workdir", chroma_url=None)
    prefix = namespaced(namespace) if namespace else workdir_prefix(workdir)
    try:
        store = ChromaVectorStore(None, url=url, prefix=prefix)
    except (ValueError, OSError) as exc:  # chromadb: "Could not connect to a Chroma server" (a ValueError)
        raise StoreUnreachable("Chroma", url, exc) from exc
    if workdir is not None and (record is None or "url" not in record):
        atomic_write_json(workdir / SERVER_FILE, {"collection_prefix": prefix, "url": url})
    return store


def _client(path: Path | None, url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url:
        parsed = urlparse(url if "://" in url else f"http://{url}")
        return chromadb.HttpClient(host=parsed.hostname or "localhost", port=parsed.port or 8000,
                                   ssl=parsed.scheme == "https", settings=settings)
    if path is None:
        return chromadb.EphemeralClient(settings=settings)
    return chromadb.PersistentClient(path=str(path), settings=settings)


class ChromaVectorStore:
    """Implements ``VectorStore``; collection names get ``prefix`` so indexes can share a server,
    or with a ``namespace`` that namespace's prefix (the same index wherever it is opened)."""

    def __init__(self, path: Path | None = None, *, url: str | None = None, prefix: str = "minirag",
                 namespace: str | None = None) -> None:
        self.url = url
        if namespace is not None:
            self.prefix = namespaced(namespace)
        else:  # in-memory clients share one process-wide store: give each index its own names
            self.prefix = prefix if (path is not None or url) else f"{prefix}-{uuid.uuid4().hex[:12]}"
        self._client = _client(path, url)
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _collection(self, name: str) -> Any:
        with self._lock:
            if name not in self._collections:
                self._collections[name] = self._client.get_or_create_collection(
                    name=f"{self.prefix}_{name}", embedding_function=None,
                    metadata={"hnsw:space": "cosine"},
                )
            return self._collections[name]

    def upsert(self, collection: str, ids: Sequence[str], embeddings: np.ndarray,
               documents: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> None:
        target = self._collection(collection)
        for start in range(0, len(ids), _BATCH):
            end = start + _BATCH
            target.upsert(ids=list(ids[start:end]), embeddings=np.asarray(embeddings[start:end]),
                          documents=list(documents[start:end]),
                          metadatas=[dict(m) or None for m in metadatas[start:end]])

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        target = self._collection(collection)
        ids = list(ids)
        for start in range(0, len(ids), _BATCH):
            target.delete(ids=ids[start:start + _BATCH])

    def query(self, collection: str, embedding: np.ndarray, k: int,
              where: dict[str, Any] | None = None) -> list[tuple[str, float, dict[str, Any]]]:
        if k <= 0:
            return []
        target = self._collection(collection)
        found = target.query(query_embeddings=[np.asarray(embedding)], n_results=k, where=where,
                             include=["distances", "metadatas"])
        if not found["ids"] or not found["ids"][0]:
            return []
        metadatas = found["metadatas"][0] if found.get("metadatas") else [None] * len(found["ids"][0])
        return [(i, 1.0 - float(d), dict(m or {}))
                for i, d, m in zip(found["ids"][0], found["distances"][0], metadatas)]

    def query_many(self, collection: str, embeddings: np.ndarray, k: int,
                   metadata: bool = True) -> list[list[tuple[str, float, dict[str, Any]]]]:
        """``query`` for several vectors in one call (one round trip to a server); without
        ``metadata`` each item's is ``{}`` (not read: about half the cost of a small query)."""
        if k <= 0 or not len(embeddings):
            return [[] for _ in range(len(embeddings))]
        found = self._collection(collection).query(query_embeddings=[np.asarray(e) for e in embeddings], n_results=k,
                                                   include=["distances", "metadatas"] if metadata else ["distances"])
        out = []
        for row, ids in enumerate(found["ids"] or [[] for _ in range(len(embeddings))]):
            metadatas = found["metadatas"][row] if found.get("metadatas") else [None] * len(ids)
            out.append([(i, 1.0 - float(d), dict(m or {})) for i, d, m in zip(ids, found["distances"][row], metadatas)])
        return out

    def ids(self, collection: str) -> set[str]:
        target = self._collection(collection)
        out: set[str] = set()
        total, offset = target.count(), 0
        while offset < total:
            out.update(target.get(limit=_PAGE, offset=offset, include=[])["ids"])
            offset += _PAGE
        return out

    def get_embeddings(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Embeddings of the given ids (those present), fetched ``_BATCH`` ids per call."""
        target = self._collection(collection)
        ids = list(ids)
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _BATCH):
            found = target.get(ids=ids[start:start + _BATCH], include=["embeddings"])
            out.update((i, np.asarray(e, dtype=np.float32)) for i, e in zip(found["ids"], found["embeddings"]))
        return out

    def get_documents(self, collection: str, ids: Sequence[str]) -> dict[str, str]:
        """Stored texts of the given ids (those present), fetched ``_BATCH`` ids per call."""
        target = self._collection(collection)
        ids = list(ids)
        out: dict[str, str] = {}
        for start in range(0, len(ids), _BATCH):
            found = target.get(ids=ids[start:start + _BATCH], include=["documents"])
            out.update((i, d) for i, d in zip(found["ids"], found["documents"]) if d is not None)
        return out

    def all_embeddings(self, collection: str) -> tuple[list[str], np.ndarray]:
        """Every id and embedding of a collection, read page by page (no id list bound)."""
        target = self._collection(collection)
        ids: list[str] = []
        pages: list[np.ndarray] = []
        total, offset = target.count(), 0
        while offset < total:
            found = target.get(limit=_PAGE, offset=offset, include=["embeddings"])
            if not found["ids"]:
                break
            ids.extend(found["ids"])
            pages.append(np.asarray(found["embeddings"], dtype=np.float32))
            offset += _PAGE
        matrix = np.concatenate(pages) if pages else np.zeros((0, 0), dtype=np.float32)
        return ids, matrix

    def count(self, collection: str) -> int:
        return int(self._collection(collection).count())
