"""The core's one retrieval entry point and the records around it, without any model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from minirag_core.indexing.registry import DocumentRecord, DocumentRegistry
from minirag_core.retrieval.common import ChunkRecords
from minirag_core.retrieval.memory_sources import top_similar
from minirag_core.retrieval.pipeline import check_mode, fill_to_k, retrieve, shortfall
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.types import KeyEdge, ReasoningPath, RetrievalResult, ScoredChunk


def _chunk(cid: str, n_tokens: int = 10, entities: list[str] | None = None, via: str = "graph") -> ScoredChunk:
    return ScoredChunk(chunk_id=cid, doc_id="d-" + cid, text=cid, score=1.0, n_tokens=n_tokens, via=via,
                       entities=entities or [])


def test_document_record_keeps_the_stored_format() -> None:
    stored = {"a": {"hash": "h1", "chunks": ["c1", "c2"], "metadata": {"k": 1}}}
    before = json.dumps(stored, sort_keys=True)
    registry = DocumentRegistry(stored)
    record = registry.get("a")
    assert record == DocumentRecord("h1", ["c1", "c2"], {"k": 1}) and record.complete
    registry.put("a", record)
    assert json.dumps(stored, sort_keys=True) == before
    registry.add_chunks("b", ["c3"], "", {"m": 2})          # a long document's first piece
    registry.add_chunks("b", ["c4"], "h2", {"m": 2})        # ... and its last
    assert stored["b"] == {"hash": "h2", "chunks": ["c3", "c4"], "metadata": {"m": 2}}
    assert registry.chunk_ids("b") == ["c3", "c4"] and registry.metadata() == {"a": {"k": 1}, "b": {"m": 2}}
    registry.remove("a")
    assert "a" not in registry and len(registry) == 1
    assert not DocumentRecord.from_json({"chunks": ["x"]}).complete


def test_explain_gathers_what_touches_the_chunks_entities() -> None:
    result = RetrievalResult(
        query="q", mode="mini", chunks=[_chunk("c1", entities=["A", "B"]), _chunk("c2", entities=["C"])],
        answer_candidates=["B", "C", "D"],
        key_edges=[KeyEdge("A", "X", 0.9), KeyEdge("A", "B", 0.5), KeyEdge("C", "D", 0.7)],
        paths=[ReasoningPath("q1", ["A", "X"], 0.9), ReasoningPath("q1", ["A", "B"], 0.4),
               ReasoningPath("q2", ["D"], 1.0)])
    why = result.explain("c1")
    assert why.entities == ["A", "B"] and why.answer_candidates == ["B"]
    assert [p.nodes for p in why.paths] == [["A", "X"], ["A", "B"]]           # result order
    assert [p.nodes for p in why.ranked_paths()] == [["A", "B"], ["A", "X"]]  # most shared entities first
    assert [(e.source, e.target) for e in why.ranked_key_edges()] == [("A", "B"), ("A", "X")]
    assert [(e.source, e.target) for e in result.explain("c2").key_edges] == [("C", "D")]
    with pytest.raises(KeyError):
        result.explain("missing")


def test_fill_to_k_tops_up_within_the_budget() -> None:
    result = RetrievalResult(query="q", mode="mini", chunks=[_chunk("c1", 40)])
    extra = RetrievalResult(query="q", mode="naive",
                            chunks=[_chunk("c1", 40, via="dense"), _chunk("big", 100, via="dense"),
                                    _chunk("c2", 30, via="dense"), _chunk("c3", 20, via="dense"),
                                    _chunk("c4", 5, via="dense")])
    assert shortfall(result, 3, available=10) == 2 and shortfall(result, 3, available=1) == 0
    assert fill_to_k(result, extra, k=3, token_budget=100) == 2
    assert [(c.chunk_id, c.via) for c in result.chunks] == [("c1", "graph"), ("c2", "fill"), ("c3", "fill")]
    assert "via='fill'" in result.notes[-1]
    assert fill_to_k(result, extra, k=5, token_budget=95) == 1  # only c4 still fits


class _ChunkStore:
    """A graph store's chunk records, counting what is asked for."""

    def __init__(self, records: dict[str, dict]) -> None:
        self.records, self.asked = records, []

    def chunks(self, ids: list[str]) -> dict[str, dict]:
        self.asked.extend(ids)
        return {c: self.records[c] for c in ids if c in self.records}


def test_chunk_records_are_read_once_each_and_in_the_order_asked() -> None:
    store = _ChunkStore({f"c{i}": {"doc_id": "d", "text": str(i)} for i in range(4)})
    records = ChunkRecords(store)
    assert list(records.read(["c2", "c0"])) == ["c2", "c0"]
    assert list(records.read(["c0", "c1", "gone", "c2"])) == ["c0", "c1", "c2"]  # a missing id is left out
    records.read(["c1", "gone"])
    assert sorted(store.asked) == ["c0", "c1", "c2", "gone"]  # nothing asked twice


def test_the_budget_never_cuts_k_silently() -> None:
    """Fewer than k chunks because of the token budget: a note says how many fit in how many
    tokens and how to raise it; no note when the index simply holds fewer than k."""
    from minirag_core.retrieval.common import materialise

    attrs = {f"c{i}": {"doc_id": f"d{i}", "text": "t", "n_tokens": 40} for i in range(6)}
    store = _ChunkStore(attrs)
    ranked = [(c, 1.0 - i / 10) for i, c in enumerate(attrs)]
    notes: list[str] = []
    chunks = materialise(None, ranked, {}, RetrievalSettings(top_k=5, token_budget=100), records=ChunkRecords(store), notes=notes)
    assert len(chunks) == 2 and len(notes) == 1
    assert "2 of the 5 chunks" in notes[0] and "100 tokens" in notes[0] and "--max-tokens" in notes[0]
    assert "(4 more ranked chunks did not fit)" in notes[0]
    notes = []
    assert len(materialise(None, ranked, {}, RetrievalSettings(top_k=5, token_budget=200), records=ChunkRecords(store),
                           notes=notes)) == 5 and notes == []
    assert len(materialise(None, ranked[:3], {}, RetrievalSettings(top_k=5, token_budget=200), records=ChunkRecords(store),
                           notes=notes)) == 3 and notes == []  # all there is fits: nothing was cut


def test_fill_to_k_brings_the_budget_note_up_to_date() -> None:
    result = RetrievalResult(query="q", mode="mini", chunks=[_chunk("c1", 40)],
                             notes=["token budget: 1 of the 3 chunks asked for fit in 100 tokens"])
    extra = RetrievalResult(query="q", mode="naive", chunks=[_chunk("c2", 30, via="dense"),
                                                             _chunk("big", 90, via="dense")])
    assert fill_to_k(result, extra, k=3, token_budget=100) == 1
    budget_notes = [n for n in result.notes if n.startswith("token budget")]
    assert len(budget_notes) == 1 and "2 of the 3 chunks" in budget_notes[0]
    assert "(more ranked chunks did not fit)" in budget_notes[0]  # the first ranking's count is not known here
    full = RetrievalResult(query="q", mode="mini", chunks=[_chunk("c1", 40)], notes=list(result.notes))
    assert fill_to_k(full, extra, k=2, token_budget=100) == 1
    assert not any(n.startswith("token budget") for n in full.notes)  # k reached: the note is gone
    fresh = RetrievalResult(query="q", mode="mini", chunks=[_chunk("c1", 40)])
    assert fill_to_k(fresh, extra, k=3, token_budget=100) == 1
    assert "(1 more ranked chunk did not fit)" in fresh.notes[0]  # "big" is left out by the top-up itself


def test_fill_to_k_keeps_scores_in_rank_order() -> None:
    """A top-up chunk scored on another scale (a dense cosine above the mini score) must not
    outrank the chunks before it for a consumer that sorts by score."""
    result = RetrievalResult(query="q", mode="mini", chunks=[_chunk("c1"), _chunk("c2")])
    result.chunks[0].score, result.chunks[1].score = 2.0, 0.4
    extra = RetrievalResult(query="q", mode="naive", chunks=[_chunk("c3", via="dense"), _chunk("c4", via="dense")])
    extra.chunks[0].score, extra.chunks[1].score = 0.9, 0.1
    assert fill_to_k(result, extra, k=4, token_budget=100) == 2
    assert [(c.chunk_id, c.score) for c in result.chunks] == [("c1", 2.0), ("c2", 0.4), ("c3", 0.4), ("c4", 0.1)]
    assert sorted(result.chunks, key=lambda c: -c.score) == result.chunks  # a stable sort keeps the order


def test_modes_are_checked_once_for_every_caller() -> None:
    assert check_mode("light") == "light"
    with pytest.raises(ValueError, match="unknown mode"):
        check_mode("hybrid")
    with pytest.raises(ValueError, match="need a query mapping"):
        retrieve(object(), "q", "mini", RetrievalSettings())  # type: ignore[arg-type]


def test_top_similar_is_exact_and_breaks_ties_by_id() -> None:
    ids = ["b", "a", "c", "d"]
    matrix = np.array([[1, 0], [1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    assert [i for i, _ in top_similar(ids, matrix, np.array([1, 0], dtype=np.float32), 3)] == ["a", "b", "d"]
    assert top_similar([], np.zeros((0, 2)), np.array([1, 0]), 3) == []


def test_fill_to_k_passes_over_a_document_at_its_cap_while_others_can_fill() -> None:
    result = RetrievalResult(query="q", mode="mini", chunks=[_chunk("a1"), _chunk("a2")])
    for c in result.chunks:
        c.doc_id = "long"
    extra = RetrievalResult(query="q", mode="naive", chunks=[_chunk("a3", via="dense"), _chunk("b1", via="dense")])
    extra.chunks[0].doc_id = "long"
    assert fill_to_k(result, extra, k=3, token_budget=100, max_per_document=2) == 1
    assert [c.chunk_id for c in result.chunks] == ["a1", "a2", "b1"]
    lone = RetrievalResult(query="q", mode="naive", chunks=[_chunk("a4", via="dense")])
    lone.chunks[0].doc_id = "long"
    assert fill_to_k(result, lone, k=4, token_budget=100, max_per_document=2) == 1  # nothing else: the cap yields


def test_cap_per_document_moves_a_long_pages_extra_chunks_below_the_top_k() -> None:
    from minirag_core.retrieval.common import cap_per_document

    ranked = [("a1", 9.0), ("a2", 8.0), ("a3", 7.0), ("b1", 6.0), ("a4", 5.0), ("c1", 4.0)]
    doc_of = {c: c[0] for c, _ in ranked}
    assert [c for c, _ in cap_per_document(ranked, doc_of, 2, 4)] == ["a1", "a2", "b1", "c1", "a3", "a4"]
    assert [c for c, _ in cap_per_document(ranked[:3], doc_of, 2, 3)] == ["a1", "a2", "a3"]  # too few others
    assert RetrievalSettings().max_chunks_per_document == 2
