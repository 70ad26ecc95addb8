"""Extraction and embedding off the writer: ``MiniRAGIndex(workers=N)``.

The insert loop forms the same batches as with one worker; each batch's uncached chunks go to a
worker (a spawned process, or a Ray task with ``worker_backend="ray"``: ``ray_backend.py``; what
the worker runs is ``worker_tasks.py``), which extracts them and embeds what the writer will most likely embed for them: the chunks'
windows, their entities' names and their relations' texts, as a graph of the batch alone would
have them. The writer, this process, takes the results in batch order and applies them exactly as
one worker does, reading each vector it needs from the worker's by text (``PrecomputedEmbedder``)
and embedding the rest itself, so the index equals the one-worker index up to the float noise of
other batch shapes (cosine >= 0.99999 per vector).
"""

from __future__ import annotations

import os
from collections import deque
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.extraction.base import Extractor
from minirag_core.indexing.worker_tasks import Prepared, init_worker, prepare_in_worker, worker_state
from minirag_core.types import Chunk, ExtractionResult

B = TypeVar("B")


class PrecomputedEmbedder:
    """``inner`` with a table of known vectors: texts found there are not embedded again."""

    def __init__(self, inner: Embedder, vectors: dict[str, np.ndarray]) -> None:
        self.inner = inner
        self.known = vectors
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), int(self.dim)), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self.known]
        for i, text in enumerate(texts):
            if text in self.known:
                out[i] = self.known[text]
        if missing:
            out[missing] = self.inner.embed([texts[i] for i in missing])
        return out

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def token_windows(self, text: str, size: int, overlap: int) -> list[str]:
        return self.inner.token_windows(text, size, overlap)

    def __getattr__(self, name: str) -> Any:  # token_offsets and the rest, where the inner has them
        return getattr(self.inner, name)


class Pool(Protocol):
    def submit(self, chunks: list[Chunk]) -> Callable[[], Prepared]: ...

    def close(self) -> None: ...


class ProcessPool:
    """``workers`` spawned processes (spawn: no fork of a process holding torch and Chroma threads)."""

    KEY = "process"

    def __init__(self, state: tuple[Extractor, Embedder, bool], workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        threads = max(1, (os.cpu_count() or 1) // workers)
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=init_worker, initargs=(self.KEY, state, threads))

    def submit(self, chunks: list[Chunk]) -> Callable[[], Prepared]:
        return self._pool.submit(prepare_in_worker, self.KEY, chunks).result

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def pipelined(batches: Iterable[B], chunks_of: Callable[[B], list[Chunk]],
              cached: Callable[[list[Chunk]], list[ExtractionResult | None]],
              store: Callable[[list[Chunk], list[ExtractionResult | None]], None],
              pool: Pool, depth: int) -> Iterator[tuple[B, Prepared]]:
    """Each batch with its results, in order, up to ``depth`` batches under way ahead of the
    writer. ``cached`` gives each chunk's cached result (None: not cached); chunks without one go
    to the pool, and ``store`` caches what comes back."""
    queue: deque[tuple[B, list[Chunk], list[ExtractionResult | None], list[int], Callable[[], Prepared] | None]]
    queue = deque()

    def finish() -> tuple[B, Prepared]:
        batch, chunks, found, missing, result = queue.popleft()
        prepared = result() if result is not None else Prepared([])
        for i, extraction in zip(missing, prepared.extractions):
            found[i] = extraction
        store([chunks[i] for i in missing], prepared.extractions)
        return batch, Prepared(found, prepared.vectors)

    for batch in batches:
        chunks = chunks_of(batch)
        found = cached(chunks)
        missing = [i for i, e in enumerate(found) if e is None]
        queue.append((batch, chunks, found, missing, pool.submit([chunks[i] for i in missing]) if missing else None))
        if len(queue) > depth:
            yield finish()
    while queue:
        yield finish()


@contextmanager
def prepared_batches(batches: Iterable[B], chunks_of: Callable[[B], list[Chunk]],
                     extract: Callable[[list[Chunk]], list[ExtractionResult | None]], *, extractor: Extractor,
                     embedder: Embedder, cache: Any, workers: int, backend: str,
                     index_relations: bool) -> Iterator[Iterator[tuple[B, Prepared]]]:
    """The batches with their results: extracted here by ``extract`` (one worker, the process
    backend), else in a pool of ``workers`` processes or Ray tasks, read through ``cache``."""
    if backend not in ("process", "ray"):
        raise ValueError(f"worker_backend {backend!r}: choose 'process' or 'ray'")
    if workers <= 1 and backend == "process":
        yield ((batch, Prepared(extract(chunks_of(batch)))) for batch in batches)
        return
    from minirag_core.indexing.cached_extraction import cached_results, store_results

    state = worker_state(extractor, embedder, index_relations)
    if backend == "ray":
        from minirag_core.indexing.ray_backend import RayPool

        pool: Pool = RayPool(state)
    else:
        pool = ProcessPool(state, workers)
    try:
        yield pipelined(batches, chunks_of, lambda chunks: cached_results(extractor, cache, chunks),
                        lambda chunks, found: store_results(extractor, cache, chunks, found), pool, max(1, workers))
    finally:
        pool.close()
