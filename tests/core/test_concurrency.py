"""Concurrency: many threads querying one index give the sequential answers, and a writer
adding documents meanwhile never exposes a half-written state.

Query embeddings are memoised by a thin wrapper around the shared embedder, so the load
test measures the index (graph, Chroma, BM25, locks), not repeated MiniLM forward passes,
and every (question, mode) gets the very same query vector in every thread.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from minirag_core.indexing.index import MiniRAGIndex

from conftest import LIHUAWORLD, lihuaworld_documents

pytestmark = pytest.mark.slow

THREADS = 8
QUERIES_PER_THREAD = 1000
MODES = ("mini", "light", "naive")
WEEKS = ("week1", "week2", "week3", "week4", "week5", "week6")


class MemoEmbedder:
    """The wrapped embedder with every text's vector kept (thread-safe)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self._memo: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def embed(self, texts):
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            vectors = self.inner.embed(missing)
            with self._lock:
                for text, vector in zip(missing, vectors):
                    self._memo.setdefault(text, vector)
        with self._lock:
            return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def count_tokens(self, text):
        return self.inner.count_tokens(text)

    def token_windows(self, text, size, overlap):
        return self.inner.token_windows(text, size, overlap)


@pytest.fixture(scope="module")
def corpus():
    docs = lihuaworld_documents(weeks=WEEKS)
    assert len(docs) >= 36
    return docs[:30], docs[30:36]


@pytest.fixture(scope="module")
def questions():
    qa = json.loads((LIHUAWORLD / "qa_dev.json").read_text(encoding="utf-8"))
    return [q["question"] for q in qa[:20]]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, embedder, corpus):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # 2 shared cores: one torch thread is faster than two fighting
    try:
        index = MiniRAGIndex(tmp_path_factory.mktemp("concurrency") / "wd", embedder=MemoEmbedder(embedder))
        index.insert(corpus[0])
        yield index
    finally:
        torch.set_num_threads(threads)


def _signature(result) -> str:
    return result.to_json()


def test_8_threads_x_1000_queries_match_sequential(loaded, questions):
    pairs = [(q, m) for q in questions for m in MODES]
    start = time.perf_counter()
    expected = {pair: _signature(loaded.query(pair[0], mode=pair[1])) for pair in pairs}
    sequential_seconds = time.perf_counter() - start
    assert all(json.loads(s)["chunks"] for s in expected.values())

    latencies: list[list[float]] = [[] for _ in range(THREADS)]
    mismatches: list[tuple] = []
    barrier = threading.Barrier(THREADS)

    def worker(t: int) -> int:
        barrier.wait()
        done = 0
        for j in range(QUERIES_PER_THREAD):
            question, mode = pairs[(t * 7 + j * 13) % len(pairs)]
            began = time.perf_counter()
            got = _signature(loaded.query(question, mode=mode))
            latencies[t].append(time.perf_counter() - began)
            if got != expected[(question, mode)]:
                mismatches.append((t, j, question, mode))
            done += 1
        return done

    start = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        done = sum(pool.map(worker, range(THREADS)))  # re-raises the first error, if any
    seconds = time.perf_counter() - start
    flat = sorted(x for per in latencies for x in per)
    p50, p95 = flat[len(flat) // 2], flat[int(len(flat) * 0.95)]
    print(f"\nconcurrency: {done} queries ({THREADS} threads x {QUERIES_PER_THREAD}, {len(pairs)} "
          f"question/mode pairs) in {seconds:.1f}s ({done / seconds:.0f}/s); latency p50 {p50 * 1000:.1f} ms, "
          f"p95 {p95 * 1000:.1f} ms; sequential pass {sequential_seconds:.1f}s for {len(pairs)}; "
          f"mismatches {len(mismatches)}")
    assert done == THREADS * QUERIES_PER_THREAD
    assert not mismatches, mismatches[:5]


def test_writer_with_concurrent_readers_never_exposes_half_written_state(loaded, corpus, questions):
    index = loaded
    new_docs = corpus[1]
    new_ids = [d.id for d in new_docs]
    pairs = [(q, m) for q in questions[:8] for m in MODES]

    def state_index() -> int:
        """How many of the new documents are in the registry (they go in one at a time, in order)."""
        present = set(index.document_ids())
        k = sum(1 for d in new_ids if d in present)
        assert all(d in present for d in new_ids[:k]), "documents appeared out of order"
        return k

    # reference results for every state 0..6, computed by the writer between its inserts
    reference: dict[int, dict] = {}

    def snapshot(k: int) -> None:
        reference[k] = {pair: _signature(index.query(pair[0], mode=pair[1])) for pair in pairs}

    observed: list[tuple[int, int, tuple, str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader(t: int) -> None:
        j = 0
        while not stop.is_set():
            pair = pairs[(t * 5 + j) % len(pairs)]
            j += 1
            try:
                before = state_index()
                result = index.query(pair[0], mode=pair[1])
                after = state_index()
                with index._rw.read():  # the registry dict itself is only stable under the lock
                    registry = {d: set(r["chunks"]) for d, r in index._documents.items()}
                for chunk in result.chunks:
                    # every chunk belongs to a registered document that lists it
                    assert chunk.chunk_id in registry.get(chunk.doc_id, ()), (chunk.doc_id, chunk.chunk_id)
                    assert chunk.text
                observed.append((before, after, pair, _signature(result)))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                return

    snapshot(0)
    readers = [threading.Thread(target=reader, args=(t,)) for t in range(4)]
    start = time.perf_counter()
    for thread in readers:
        thread.start()
    try:
        for k, doc in enumerate(new_docs, 1):
            report = index.insert([doc])
            assert report.inserted == [doc.id]
            snapshot(k)
    finally:
        time.sleep(0.2)
        stop.set()
        for thread in readers:
            thread.join()
    seconds = time.perf_counter() - start
    assert not errors, repr(errors[0])

    # each result equals the sequential result of one whole state between its before and after
    torn = [(b, a, p) for b, a, p, s in observed if not any(reference[k][p] == s for k in range(b, a + 1))]
    spanning = sum(1 for b, a, _, _ in observed if a > b)
    print(f"\nwriter + readers: {len(new_docs)} inserts while 4 readers ran {len(observed)} queries in "
          f"{seconds:.1f}s ({spanning} overlapped an insert); results not matching a whole state: {len(torn)}")
    assert len(observed) >= 50
    assert not torn, torn[:5]
    assert index.document_ids() == sorted(d.id for d in corpus[0] + new_docs)


def test_type_pool_computed_during_a_write_is_not_cached_stale(tmp_path, embedder, corpus):
    """A query computing the answer-type pool while an insert commits must not leave the
    pre-insert pool cached after the insert (it would be used until the next write)."""
    from minirag_core.types import Document

    index = MiniRAGIndex(tmp_path / "wd", embedder=MemoEmbedder(embedder))
    index.insert(corpus[0][:1])
    real = index.graph_store.type_pool
    computed, release = threading.Event(), threading.Event()

    def paused_type_pool(*args, **kwargs):
        pool = real(*args, **kwargs)
        if not computed.is_set():  # the first call: pause after reading the graph
            computed.set()
            release.wait(30)
        return pool

    index.graph_store.type_pool = paused_type_pool
    before = list(real().items())
    doc = Document("newcomers", "Time: 20261201_10:00\nLiHua: I met Professor Amadou Diallo and Ingrid Solberg "
                                "from the Bergen Maritime Museum at the Kyoto Jazz Festival in Oslo.")
    reader = threading.Thread(target=index.type_pool)
    writer = threading.Thread(target=index.insert, args=([doc],))
    reader.start()
    assert computed.wait(30)
    writer.start()
    deadline = time.monotonic() + 60
    while writer.is_alive() and not index._rw._waiting_writers and time.monotonic() < deadline:
        time.sleep(0.01)  # until the insert has committed, or waits for the reader to finish
    release.set()
    reader.join(30)
    writer.join(60)
    assert not reader.is_alive() and not writer.is_alive()
    after = list(real().items())
    assert after != before, "the new document should change the type pool"
    assert list(index.type_pool().items()) == after
