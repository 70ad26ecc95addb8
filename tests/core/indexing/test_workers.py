"""``workers=N``: extraction and embedding in other processes, the same index as one worker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from minirag_core.indexing import index as index_module
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.workers import PrecomputedEmbedder, Prepared, pipelined
from minirag_core.search.vectors import WINDOWS
from minirag_core.types import Chunk, Document, ExtractionResult
from index_state import _assert_same_vectors, _graph_state, _vector_state

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


def assert_same_index(a: MiniRAGIndex, b: MiniRAGIndex) -> None:
    """Same graph (every node, edge and attribute), vectors within 1e-5, the same top 5."""
    assert _graph_state(a) == _graph_state(b)
    _assert_same_vectors(_vector_state(a), _vector_state(b))
    wa, wb = windows(a), windows(b)
    assert wa.keys() == wb.keys()
    for key in wa:
        np.testing.assert_allclose(wa[key], wb[key], atol=1e-5)
    for question in QUESTIONS:
        assert ([c.chunk_id for c in a.query(question).chunks]
                == [c.chunk_id for c in b.query(question).chunks]), question


@pytest.mark.slow
def test_two_workers_build_the_one_worker_index(tmp_path, monkeypatch, embedder) -> None:
    monkeypatch.setattr(index_module, "INSERT_BATCH_CHUNKS", 6)  # several batches in flight at once
    one = MiniRAGIndex(tmp_path / "one", embedder=embedder)
    one.insert(corpus())
    two = MiniRAGIndex(tmp_path / "two", embedder=embedder, workers=2)
    report = two.insert(corpus())
    assert report.chunks == one.stats()["chunks"] and not report.failed_chunks
    assert_same_index(one, two)
    again = two.insert(corpus())  # unchanged: nothing extracted or written again
    assert again.chunks == 0 and len(again.unchanged) == len(corpus())


class _Pool:
    """Runs a batch's "extraction" when its result is asked for, recording the order."""

    def __init__(self) -> None:
        self.submitted: list[list[str]] = []

    def submit(self, chunks: list[Chunk]):
        self.submitted.append([c.id for c in chunks])
        return lambda: Prepared([ExtractionResult(content_keywords=[c.id]) for c in chunks], {c.text: np.ones(2)
                                                                                             for c in chunks})

    def close(self) -> None:
        pass


def test_pipelined_keeps_batch_order_reads_the_cache_and_stores_what_workers_found() -> None:
    chunks = [Chunk(id=f"c{i}", doc_id="d", order=i, text=f"text {i}", n_tokens=2) for i in range(7)]
    batches = [chunks[0:3], chunks[3:5], chunks[5:7]]
    cache = {"c1": ExtractionResult(content_keywords=["cached"]), "c3": ExtractionResult(content_keywords=["cached"]),
             "c4": ExtractionResult(content_keywords=["cached"])}
    stored: list[str] = []
    pool = _Pool()
    out = list(pipelined(batches, list, lambda cs: [cache.get(c.id) for c in cs],
                         lambda cs, found: stored.extend(c.id for c in cs), pool, depth=2))
    assert [b for b, _ in out] == batches
    assert pool.submitted == [["c0", "c2"], ["c5", "c6"]]  # the all-cached batch goes to no worker
    assert [e.content_keywords[0] for _, p in out for e in p.extractions] == ["c0", "cached", "c2", "cached",
                                                                              "cached", "c5", "c6"]
    assert stored == ["c0", "c2", "c5", "c6"]


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
