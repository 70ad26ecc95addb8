"""Extraction and embedding off the writer: ``MiniRAGIndex(workers=N)``, by default one worker
per core (``worker_count.py``).

An index starts its pool at the first insert large enough to pay for it and keeps it, one model
per worker, until ``MiniRAGIndex.close()`` (or the index is collected). The insert loop forms the same batches as with one worker; each batch's uncached chunks go to a
worker (a spawned process, or a Ray task with ``worker_backend="ray"``: ``ray_backend.py``; what
the worker runs is ``worker_tasks.py``), which extracts them and embeds what the writer will most likely embed for them: the chunks'
windows, their entities' names and their relations' texts, as a graph of the batch alone would
have them. With processes, the writer prepares batches itself too, in a thread, while they start:
the first, and any they have no room for until one comes back (``batch_lanes.py``). The writer, this process, takes the results in batch order and applies them exactly as
one worker does, reading each vector it needs from the worker's by text (``PrecomputedEmbedder``)
and embedding the rest itself, so the index equals the one-worker index up to the float noise of
other batch shapes (cosine >= 0.99999 per vector).
"""

from __future__ import annotations

import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.extraction.base import Extractor
from minirag_core.indexing import worker_count
from minirag_core.indexing.batch_lanes import Lane, Pending, pipelined
from minirag_core.indexing.cached_extraction import cached_results, extract_cached, store_results
from minirag_core.indexing.worker_tasks import Prepared, init_process_worker, prepare, prepare_in_worker, worker_state
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


BACKENDS = ("process", "ray")


class Pool(Protocol):
    def submit(self, chunks: list[Chunk], index_relations: bool) -> Pending: ...

    def close(self) -> None: ...


class ProcessPool:
    """``workers`` spawned processes (spawn: no fork of a process holding torch and Chroma threads),
    torch on ``threads`` threads in each."""

    KEY = "process"

    def __init__(self, state: tuple[Extractor, Embedder], workers: int, threads: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.warm = False  # a batch has come back: the processes have started
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=init_process_worker, initargs=(self.KEY, state, threads))

    def submit(self, chunks: list[Chunk], index_relations: bool) -> Pending:
        future = self._pool.submit(prepare_in_worker, self.KEY, chunks, index_relations)
        future.add_done_callback(lambda _: setattr(self, "warm", True))
        return future

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _prepare_here(extractor: Extractor, embedder: Embedder, chunks: list[Chunk], index_relations: bool,
                  threads: Callable[[], int]) -> Prepared:
    """``prepare`` in the writer's lane, its ONNX Runtime batches on at most ``threads()`` threads
    (asked as the batch starts: its share of the cores once worker processes run beside it)."""
    from minirag_core.embedding.sentence_transformer import batch_threads_at_most

    with batch_threads_at_most(threads()):
        return prepare(extractor, embedder, chunks, index_relations)


def _stop(running: dict[str, Any]) -> None:
    """Stop the writer's lane, then the pool."""
    here, pool = running.pop("here", None), running.pop("pool", None)
    if here is not None:
        here.shutdown(wait=True, cancel_futures=True)
    if pool is not None:
        pool.close()


class IndexWorkers:
    """An index's workers: ``count`` of them on ``backend``, the pool started by the first insert
    that is worth it and kept for the index's life (``close``)."""

    def __init__(self, workers: int | None, backend: str, extractor: Extractor, embedder: Embedder,
                 cache: Any) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"worker_backend {backend!r}: choose 'process' or 'ray'")
        self.count, self.backend = worker_count.resolve_workers(workers), backend
        self.extractor, self.embedder, self.cache = extractor, embedder, cache
        self._running: dict[str, Any] = {}  # "pool", and "here": the writer's lane beside a process pool
        self._closer = weakref.finalize(self, _stop, self._running)

    @property
    def running(self) -> bool:
        """Whether the pool has started (it is kept for the index's life)."""
        return "pool" in self._running

    def _uses_pool(self, chars: int) -> bool:
        """Whether an insert of ``chars`` characters goes to lanes: with the process backend, not
        with one worker nor below ``MIN_POOL_CHARS`` characters (unless the pool runs already)."""
        if self.running or self.backend == "ray":
            return True
        return self.count > 1 and chars >= worker_count.MIN_POOL_CHARS

    def _pool(self) -> Pool:
        """The running pool, or one started now."""
        pool = self._running.get("pool")
        if pool is None:
            state = worker_state(self.extractor, self.embedder)
            if self.backend == "ray":
                from minirag_core.indexing.ray_backend import RayPool

                pool = RayPool(state)
            else:
                pool = ProcessPool(state, self.count, max(1, worker_count.available_cores() // self.count))
            self._running["pool"] = pool
        return pool

    def extract_here(self, chunks: list[Chunk]) -> list[ExtractionResult | None]:
        """``chunks`` extracted in this process, through the extraction cache."""
        return extract_cached(self.extractor, self.cache, chunks)

    def prepared(self, batches: Iterable[B], chunks_of: Callable[[B], list[Chunk]], chars: int,
                 index_relations: bool) -> Iterator[tuple[B, Prepared]]:
        """The batches of an insert of ``chars`` characters with their results, read through the
        extraction cache and prepared here or in the lanes. With processes, the writer's own thread
        takes the first batch and, until the first batch comes back from the N worker processes
        (their start-up), any batch they have no room for; the processes start when a second
        batch finds the writer's thread busy (an insert of one batch never starts them)."""
        if not self._uses_pool(chars):
            return ((batch, Prepared(self.extract_here(chunks_of(batch)))) for batch in batches)
        if not self.running:  # refused now, not after a first batch, if they cannot travel
            worker_state(self.extractor, self.embedder)
        extractor, embedder, cache, count = self.extractor, self.embedder, self.cache, self.count
        warm = lambda: bool(getattr(self._running.get("pool"), "warm", self.backend == "ray"))  # noqa: E731
        lanes = [Lane(lambda chunks: self._pool().submit(chunks, index_relations),
                      lambda: count + 1 if warm() else count)]  # once started, one more waits its turn
        if self.backend == "process":
            if "here" not in self._running:
                self._running["here"] = ThreadPoolExecutor(1, thread_name_prefix="minirag-writer-lane")
            here, cores = self._running["here"], worker_count.available_cores()
            share = lambda: max(1, cores // (count + 1)) if self.running else cores  # noqa: E731
            lanes.insert(0, Lane(lambda chunks: here.submit(_prepare_here, extractor, embedder, chunks,
                                                            index_relations, share), lambda: 0 if warm() else 1))
        return pipelined(batches, chunks_of, lambda chunks: cached_results(extractor, cache, chunks),
                         lambda chunks, found: store_results(extractor, cache, chunks, found), lanes,
                         2 * count + 2)

    def close(self) -> None:
        """Shut the pool down (a later insert starts another)."""
        _stop(self._running)
