"""Extraction and embedding off the writer: ``MiniRAGIndex(workers=N)``.

The insert loop forms the same batches as with one worker; each batch's uncached chunks go to a
worker (a spawned process, or a Ray task with ``worker_backend="ray"``: ``ray_backend.py``),
which extracts them and embeds what the writer will most likely embed for them: the chunks'
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
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

import networkx as nx
import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.embedding.windows import text_windows
from minirag_core.extraction.base import Extractor
from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.records import RELATION
from minirag_core.indexing.cached_extraction import extract_isolating_failures
from minirag_core.search.graph_vectors import chunk_vector_text, relation_text
from minirag_core.search.vectors import relation_has_meaning
from minirag_core.types import Chunk, ExtractionResult

B = TypeVar("B")


@dataclass
class Prepared:
    """A batch's extraction results (None: the chunk failed) and vectors by text."""

    extractions: list[ExtractionResult | None]
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


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


def expected_texts(embedder: Embedder, chunks: Sequence[Chunk], extractions: Sequence[ExtractionResult | None],
                   index_relations: bool = True) -> tuple[list[str], list[str]]:
    """The chunk windows and the short texts (entity names, relation texts) the writer embeds
    for ``chunks`` when their entities and relations are new to the graph."""
    g = nx.Graph()
    windows: list[str] = []
    for chunk, extraction in zip(chunks, extractions):
        graph_ops.add_chunk(g, chunk, extraction or ExtractionResult())
    names = sorted({g.nodes[n]["name"] for n in g.nodes if g.nodes[n].get("kind") != graph_ops.CHUNK})
    for chunk in chunks:
        windows += text_windows(embedder, chunk_vector_text(g, chunk.id))
    relations = sorted(relation_text(g, u, v) for u, v, kind in g.edges(data="kind")
                       if index_relations and kind == RELATION and relation_has_meaning(g.edges[u, v]["keywords"]))
    return list(dict.fromkeys(windows)), names + relations


def prepare(extractor: Extractor, embedder: Embedder, chunks: list[Chunk], index_relations: bool = True) -> Prepared:
    """A worker's job: extract ``chunks`` and embed what the writer will ask for."""
    extractions = extract_isolating_failures(extractor, chunks)
    windows, short = expected_texts(embedder, chunks, extractions, index_relations)
    vectors: dict[str, np.ndarray] = {}
    for texts in (windows, short):
        if texts:
            vectors.update(zip(texts, np.asarray(embedder.embed(texts), dtype=np.float32)))
    return Prepared(extractions, vectors)


# -- worker processes -------------------------------------------------------------------------
#: this worker process's extractor, embedder and index_relations, set once by ``init_worker``
_STATE: dict[str, tuple[Extractor, Embedder, bool]] = {}


def worker_state(extractor: Extractor, embedder: Embedder, index_relations: bool) -> tuple[Extractor, Embedder, bool]:
    """What a worker is started with, checked to travel to another process (the pool and Ray
    serialise it themselves; one tuple, so an embedder the extractor shares stays one object)."""
    try:
        from multiprocessing.reduction import ForkingPickler  # what the pool will send it with

        ForkingPickler.dumps((extractor, embedder, index_relations))
    except Exception as exc:  # noqa: BLE001 - pickle raises several types
        raise ValueError(f"workers > 1 needs an extractor and embedder that pickle ({exc}); "
                         "use workers=1 with this one") from exc
    return extractor, embedder, index_relations


def init_worker(key: str, state: tuple[Extractor, Embedder, bool], threads: int) -> None:
    """Keep ``state`` for this process's batches, with torch on ``threads`` threads."""
    if key in _STATE:
        return
    try:
        import torch

        torch.set_num_threads(max(1, threads))
    except ImportError:  # pragma: no cover - an embedder without torch
        pass
    _STATE[key] = state


def prepare_in_worker(key: str, chunks: list[Chunk]) -> Prepared:
    """``prepare`` with the extractor and embedder this process was started with."""
    extractor, embedder, index_relations = _STATE[key]
    return prepare(extractor, embedder, chunks, index_relations)


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
