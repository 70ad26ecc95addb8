"""``workers=N``: extraction and embedding in other processes, the same index as one worker."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from minirag_core.indexing import index as index_module
from minirag_core.indexing import worker_count
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.batch_lanes import Lane, pipelined
from minirag_core.indexing.workers import PrecomputedEmbedder, Prepared
from minirag_core.search.vectors import WINDOWS
from minirag_core.types import Chunk, Document, ExtractionResult
from index_state import _graph_state, _vector_state

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "lihuaworld_sample"
PROSE = [
    "Ada Lovelace was an English mathematician. She worked with Charles Babbage on the Analytical Engine "
    "in London. Her notes on the engine, published in 1843, include the first published algorithm.",
    "The Analytical Engine was designed by Charles Babbage. It was never built, but the Science Museum in "
    "London built his Difference Engine No. 2 in 1991 from his plans. " * 30,  # a long one: several chunks
    "# Installation\n\nInstall the package with pip. The `minirag` command indexes a folder.\n\n"
    "## Configuration\n\nSet `workers` to run extraction in several processes on a multi-core machine.",
]
QUESTIONS = ["Who repaired the door hinge?", "Where did they plan to have lunch?", "Who designed the Analytical Engine?"]


def corpus() -> list[Document]:
    sessions = [Document(id=p.stem, text=p.read_text(encoding="utf-8")) for p in sorted(SAMPLE.glob("*.txt"))[:12]]
    return sessions + [Document(id=f"prose-{i}", text=t) for i, t in enumerate(PROSE)]


def windows(index: MiniRAGIndex) -> dict[str, np.ndarray]:
    ids = sorted(index.vectors.store.ids(WINDOWS))
    return index.vectors.store.get_embeddings(WINDOWS, ids) if ids else {}


#: the vectors of one text from two builds agree to this cosine: the ONNX encoders' float noise
#: between batch shapes and sizes, which one worker's builds also show (a text embedded in
#: another batch moves by up to ~1e-3 per component)
SAME_VECTOR_COSINE = 0.9999


def assert_same_vectors(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    """The same ids, each pair of vectors at cosine >= ``SAME_VECTOR_COSINE``."""
    assert a.keys() == b.keys()
    cosines = {key: float(np.dot(a[key], b[key]) / (np.linalg.norm(a[key]) * np.linalg.norm(b[key]))) for key in a}
    worst = min(cosines, key=cosines.__getitem__, default=None)
    assert worst is None or cosines[worst] >= SAME_VECTOR_COSINE, (worst, cosines[worst])


def assert_same_index(a: MiniRAGIndex, b: MiniRAGIndex) -> None:
    """Same graph (every node, edge and attribute), the same vectors up to float noise, the same top 5."""
    assert _graph_state(a) == _graph_state(b)
    va, vb = _vector_state(a), _vector_state(b)
    for collection in va:
        assert_same_vectors(va[collection], vb[collection])
    assert_same_vectors(windows(a), windows(b))
    for question in QUESTIONS:
        assert ([c.chunk_id for c in a.query(question).chunks]
                == [c.chunk_id for c in b.query(question).chunks]), question


class BatchOrigins:
    """Records, per written batch, the process that extracted it and how many models it held."""

    def __init__(self, monkeypatch) -> None:
        self.seen: list[tuple[int, int]] = []
        write = MiniRAGIndex._insert_batch

        def recording(index, batch, prepared, report):
            self.seen.append((prepared.pid, prepared.models_held))
            return write(index, batch, prepared, report)

        monkeypatch.setattr(MiniRAGIndex, "_insert_batch", recording)

    def take(self) -> list[tuple[int, int]]:
        seen, self.seen = self.seen, []
        return seen


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_two_workers_build_the_one_worker_index_in_one_pool_for_the_index_life(tmp_path, monkeypatch,
                                                                                embedder) -> None:
    monkeypatch.setattr(index_module, "INSERT_BATCH_CHUNKS", 2)  # several batches in flight at once
    monkeypatch.setattr(worker_count, "MIN_POOL_CHARS", 0)
    origins = BatchOrigins(monkeypatch)
    docs = corpus()
    one = MiniRAGIndex(tmp_path / "one", embedder=embedder, workers=1)
    one.insert(docs[:8]), one.insert(docs[8:])
    assert {pid for pid, _ in origins.take()} == {os.getpid()}
    with MiniRAGIndex(tmp_path / "two", embedder=embedder, workers=2) as two:
        report = two.insert(docs[:8])
        first = origins.take()
        assert not report.failed_chunks
        workers = {pid for pid, _ in first if pid != os.getpid()}
        assert 1 <= len(workers) <= 2  # the pool's processes (the writer's own thread helped while they started)
        assert all(held == (1 if pid in workers else 0) for pid, held in first)
        two.insert(docs[8:])  # a second insert (several batches): the same process, still holding one model
        second = [(pid, held) for pid, held in origins.take() if pid != os.getpid()]
        assert second and {pid for pid, _ in second} <= workers and all(held == 1 for _, held in second)
        assert_same_index(one, two)
        again = two.insert(docs)  # unchanged: nothing extracted or written again
        assert again.chunks == 0 and len(again.unchanged) == len(docs)
    assert not two.workers.running and not any(alive(pid) for pid in workers)  # closed with the index


class _Done:
    """A batch whose "extraction" runs when its result is asked for (``done``: ``finished``)."""

    def __init__(self, chunks: list[Chunk], finished: bool = False) -> None:
        self.chunks, self.cancelled, self.finished = chunks, False, finished

    def done(self) -> bool:
        return self.finished

    def result(self) -> Prepared:
        return Prepared([ExtractionResult(content_keywords=[c.id]) for c in self.chunks],
                        {c.text: np.ones(2) for c in self.chunks})

    def cancel(self) -> None:
        self.cancelled = True


class _Pool:
    """Records the chunks of each submitted batch, in order."""

    def __init__(self, finished: bool = False) -> None:
        self.submitted: list[list[str]] = []
        self.pending: list[_Done] = []
        self.finished = finished

    def submit(self, chunks: list[Chunk]) -> _Done:
        self.submitted.append([c.id for c in chunks])
        self.pending.append(_Done(chunks, self.finished))
        return self.pending[-1]


def test_pipelined_keeps_batch_order_reads_the_cache_and_stores_what_workers_found() -> None:
    chunks = [Chunk(id=f"c{i}", doc_id="d", order=i, text=f"text {i}", n_tokens=2) for i in range(7)]
    batches = [chunks[0:3], chunks[3:5], chunks[5:7]]
    cache = {"c1": ExtractionResult(content_keywords=["cached"]), "c3": ExtractionResult(content_keywords=["cached"]),
             "c4": ExtractionResult(content_keywords=["cached"])}
    stored: list[str] = []
    pool = _Pool()
    out = list(pipelined(batches, list, lambda cs: [cache.get(c.id) for c in cs],
                         lambda cs, found: stored.extend(c.id for c in cs), [Lane(pool.submit, lambda: 2)], ahead=4))
    assert [b for b, _ in out] == batches
    assert pool.submitted == [["c0", "c2"], ["c5", "c6"]]  # the all-cached batch goes to no worker
    assert [e.content_keywords[0] for _, p in out for e in p.extractions] == ["c0", "cached", "c2", "cached",
                                                                              "cached", "c5", "c6"]
    assert stored == ["c0", "c2", "c5", "c6"]


def test_pipelined_cancels_the_batches_under_way_when_the_writer_stops() -> None:
    chunks = [Chunk(id=f"c{i}", doc_id="d", order=i, text=f"text {i}", n_tokens=2) for i in range(6)]
    pool = _Pool()
    batches = pipelined([chunks[i:i + 2] for i in range(0, 6, 2)], list, lambda cs: [None] * len(cs),
                        lambda cs, found: None, [Lane(pool.submit, lambda: 3)], ahead=4)
    next(batches)  # the writer takes the first batch, then fails
    batches.close()
    assert [p.cancelled for p in pool.pending] == [False, True, True]


def test_pipelined_sends_each_batch_to_the_first_lane_with_room_and_keeps_the_order() -> None:
    chunks = [Chunk(id=f"c{i}", doc_id="d", order=i, text=f"text {i}", n_tokens=2) for i in range(10)]
    batches = [chunks[i:i + 2] for i in range(0, 10, 2)]
    slow, quick = _Pool(), _Pool(finished=True)  # a pool still starting; the writer's lane, done at once
    out = list(pipelined(batches, list, lambda cs: [None] * len(cs), lambda cs, found: None,
                         [Lane(quick.submit, lambda: 1), Lane(slow.submit, lambda: 1)], ahead=8))
    assert [b for b, _ in out] == batches  # in order, wherever prepared
    assert [e.content_keywords[0] for _, p in out for e in p.extractions] == [c.id for c in chunks]
    assert quick.submitted == [[c.id for c in b] for b in batches] and slow.submitted == []
    slow, busy = _Pool(), _Pool()  # both lanes full: the writer waits until one has room
    gen = pipelined(batches, list, lambda cs: [None] * len(cs), lambda cs, found: None,
                    [Lane(busy.submit, lambda: 1), Lane(slow.submit, lambda: 1)], ahead=8)
    threading.Timer(0.2, lambda: setattr(busy.pending[0], "finished", True)).start()
    first = next(gen)  # the first lane's batch finished: the next batch went there, then the first came out
    assert first[0] == batches[0] and busy.submitted == [["c0", "c1"], ["c4", "c5"]]
    assert slow.submitted == [["c2", "c3"]]
    gen.close()
    assert slow.pending[0].cancelled and busy.pending[1].cancelled


@pytest.mark.slow
@pytest.mark.skipif(worker_count.available_cores() < 2, reason="one core: the default is one worker")
def test_the_default_build_runs_in_workers_when_large_enough_and_equals_one_worker(tmp_path, monkeypatch,
                                                                                   embedder) -> None:
    docs = corpus()
    small, large = docs[:2], docs[2:]
    monkeypatch.setattr(index_module, "INSERT_BATCH_CHUNKS", 6)
    monkeypatch.setattr(worker_count, "MIN_POOL_CHARS", sum(len(d.text) for d in large))
    origins = BatchOrigins(monkeypatch)
    one = MiniRAGIndex(tmp_path / "one", embedder=embedder, workers=1)
    one.insert(small), one.insert(large)
    origins.take()
    with MiniRAGIndex(tmp_path / "default", embedder=embedder) as default:
        assert default.workers.count == worker_count.default_workers() > 1
        default.insert(small)  # below the size worth a pool: in this process
        assert {pid for pid, _ in origins.take()} == {os.getpid()} and not default.workers.running
        default.insert(large)
        assert {pid for pid, _ in origins.take()} - {os.getpid()} and default.workers.running  # a worker's too
        assert_same_index(one, default)


def test_precomputed_embedder_embeds_only_what_it_was_not_given(embedder) -> None:
    known = {"Ada Lovelace": np.full(embedder.dim, 0.5, dtype=np.float32)}
    calls: list[list[str]] = []

    class Counting:
        name, dim, max_tokens = embedder.name, embedder.dim, embedder.max_tokens

        def embed(self, texts):
            calls.append(list(texts))
            return embedder.embed(texts)

    found = PrecomputedEmbedder(Counting(), known).embed(["Ada Lovelace", "Charles Babbage"])
    assert calls == [["Charles Babbage"]]
    assert np.allclose(found[0], 0.5) and np.allclose(found[1], embedder.embed(["Charles Babbage"])[0])
