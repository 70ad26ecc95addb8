"""Chunk dense search started before a mode's graph work and collected after it.

Past the ANN threshold (or with the vectors on a Chroma server) the chunk search waits on the
vector store while the graph walk runs on this process's CPU: run side by side, a mini or
light query costs the longer of the two instead of their sum. Sources opt in with
``concurrent_search = True`` (their vector search is safe beside their graph reads from
another thread); with others the search runs when collected, as before.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Mapping

from .sources import RetrievalSources

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="minirag-search")
        return _POOL


def start_dense_search(sources: RetrievalSources, query: str) -> Callable[[], Mapping[str, float]]:
    """Start ``query``'s chunk dense scores; the returned call gives them (raising what the
    search raised)."""
    vector = sources.embedder.embed([query])[0]
    if not getattr(sources, "concurrent_search", False):
        return lambda: sources.chunk_dense_scores(vector)
    return _pool().submit(sources.chunk_dense_scores, vector).result
