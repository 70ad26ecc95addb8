"""What a session's follow-up sends: new chunks admitted by measured relevance
(``retrieval/session_delta.py``), graph rows of the new chunks only, each row once."""

from __future__ import annotations

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.session import MiniRAGSession
from minirag_core.retrieval.session_delta import Admission, edge_key, path_steps, row_keys
from minirag_core.types import ScoredChunk
from conversation import CHAIN, conversation_index


def _chunk(chunk_id: str, score: float, text: str = "") -> ScoredChunk:
    return ScoredChunk(chunk_id, chunk_id, text or chunk_id, score, 5)


RANKED = [_chunk("seen-a", 4.0), _chunk("new-b", 3.5), _chunk("seen-c", 1.0), _chunk("new-d", 2.0),
          _chunk("new-e", 3.0)]


def test_admit_ratio_keeps_chunks_sent_before_and_new_ones_near_the_best() -> None:
    kept = Admission(admit_ratio=0.8).select(RANKED, {"seen-a", "seen-c"}, k=5)
    # the best score is a chunk the model has read (4.0): a new chunk needs 3.2; seen ones cost a reference
    assert [c.chunk_id for c in kept] == ["seen-a", "new-b", "seen-c"]
    assert [c.chunk_id for c in Admission(admit_ratio=0.7).select(RANKED, {"seen-a", "seen-c"}, k=5)] == \
        ["seen-a", "new-b", "seen-c", "new-e"]
    assert [c.chunk_id for c in Admission(admit_ratio=0.7).select(RANKED, {"seen-a", "seen-c"}, k=2)] == \
        ["seen-a", "new-b"]
    assert [c.chunk_id for c in Admission(new_chunks=1).select(RANKED, {"seen-a", "seen-c"}, k=5)] == \
        ["seen-a", "new-b", "seen-c"]
    assert Admission().select(RANKED, {"seen-a"}, k=3) == RANKED[:3]  # unbounded: the top k as ranked


@pytest.mark.parametrize("options", [{"admit_ratio": 1.5}, {"admit_ratio": -0.1}, {"new_chunks": -1}])
def test_bad_admission_values_are_refused(options) -> None:
    with pytest.raises(ValueError):
        Admission(**options)


@pytest.fixture(scope="module")
def index(embedder) -> MiniRAGIndex:
    return conversation_index(embedder)


QUESTIONS = [*CHAIN, "Which river runs through Boston?", "Which city is known for port wine?"]


def test_a_bounded_follow_up_sends_new_chunks_near_the_turns_best(index: MiniRAGIndex) -> None:
    free, bounded = index.session(admit_ratio=None, rows_of_new_chunks=False), index.session(admit_ratio=0.9)
    tokens = {"free": 0, "bounded": 0}
    fewer_new = []
    for number, question in enumerate(QUESTIONS):
        wide, narrow = free.query(question, top_k=3), bounded.query(question, top_k=3)
        fewer_new.append(len(narrow.new) < len(wide.new))
        tokens["free"] += index.embedder.count_tokens(wide.to_context())
        tokens["bounded"] += index.embedder.count_tokens(narrow.to_context())
        if number == 0:
            assert narrow.passages == wide.passages and narrow.rows == wide.rows  # the first turn is not bounded
            continue
        best = max(c.score for c in narrow.result.chunks)
        assert all(c.score >= 0.9 * best for c in narrow.result.chunks if c.chunk_id in narrow.new)
        touching = {e for c in narrow.result.chunks if c.chunk_id in narrow.new for e in c.entities}
        assert all(touching & {e.source, e.target} for e in narrow.rows.edges)
        assert all(touching & set(p.nodes) for p in narrow.rows.paths)
        assert all(c in touching for c in narrow.rows.candidates)
    assert tokens["bounded"] < tokens["free"]
    assert any(fewer_new)  # some follow-up passed over a new chunk the free session sent


def test_a_bounded_session_sends_no_chunk_or_graph_row_twice(index: MiniRAGIndex) -> None:
    session = index.session(admit_ratio=0.5, rows_of_new_chunks=True)
    turns = [session.query(q, top_k=3) for q in QUESTIONS]
    contexts = "\n".join(t.to_context() for t in turns)
    for text in {c.chunk_id: c.text for t in turns for c in t.result.chunks}.values():
        assert contexts.count(text) == 1
    before: set[tuple[str, ...]] = set()
    for turn in turns:
        assert not {("candidate", c) for c in turn.rows.candidates} & before
        assert not {edge_key(e.source, e.target) for e in turn.rows.edges} & before
        assert all(not set(path_steps(p)) <= before for p in turn.rows.paths)  # a path tells something new
        before |= set(row_keys(turn.rows))
    assert before  # the turns did send graph rows


def test_admission_options_round_trip_through_json(index: MiniRAGIndex) -> None:
    session = index.session(admit_ratio=0.7, rows_of_new_chunks=True)
    session.query(CHAIN[0], top_k=3)
    restored = MiniRAGSession.from_json(index, session.to_json())
    assert (restored.admit_ratio, restored.rows_of_new_chunks) == (0.7, True)
    a, b = session.query(CHAIN[2], top_k=3), restored.query(CHAIN[2], top_k=3)
    assert (a.passages, a.new, a.rows) == (b.passages, b.new, b.rows)


def test_a_session_saved_before_admission_restores_unbounded(index: MiniRAGIndex) -> None:
    session = index.session()
    session.query(CHAIN[0], top_k=3)
    saved = session.to_dict()
    for key in ("admit_ratio", "rows_of_new_chunks"):  # the limits a saved session of the first release held
        del saved["limits"][key]
    restored = MiniRAGSession.from_dict(index, saved)
    assert (restored.admit_ratio, restored.rows_of_new_chunks) == (None, False)
    assert (session.admit_ratio, session.rows_of_new_chunks) == (0.7, True)  # a new session admits by relevance
