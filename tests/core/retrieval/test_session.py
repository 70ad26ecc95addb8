"""Conversations over one index (``index.session()``): a follow-up continues the previous turn's
entities, the context never sends a chunk twice in full, the session round-trips through JSON,
stays within its limits and leaves the index as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from index_state import _assert_same_vectors, _graph_state, _vector_state
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.session import MiniRAGSession, refers_back
from conversation import CHAIN, conversation_index

def _files(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def index(embedder, tmp_path_factory) -> MiniRAGIndex:
    return conversation_index(embedder, tmp_path_factory.mktemp("session") / "wd")


def test_a_pronoun_follow_up_resolves_to_the_previous_turns_entity(index: MiniRAGIndex) -> None:
    session = index.session()
    first = session.query(CHAIN[0], top_k=3)
    assert "ACME ROBOTICS" in session.turns[0].query_entities
    assert "MARIA OKAFOR" in session.turns[0].answer_entities  # who the first answer is about
    follow_up = session.query(CHAIN[1], top_k=3)
    assert "MARIA OKAFOR" in follow_up.carried
    assert "MARIA OKAFOR" in session.turns[1].query_entities
    assert follow_up.result.chunks[0].doc_id == "okafor"
    assert follow_up.result.query == CHAIN[1]
    assert first.new and first.result.chunks
    # the same question with no earlier turn has nobody to refer to
    alone = index.session().query(CHAIN[1], top_k=3)
    assert alone.carried == []


def test_a_question_naming_an_entity_carries_nothing(index: MiniRAGIndex) -> None:
    session = index.session()
    session.query(CHAIN[0], top_k=3)
    assert session.query("What does Tidewater Labs work on?", top_k=3).carried == []
    # a pronoun after the question named something refers to that, not to an earlier turn
    assert session.query("Tidewater Labs is in Boston: what does it work on?", top_k=3).carried == []
    carried = session.query("And where is it?", top_k=3).carried  # "it": the last turn's things, no person
    assert "TIDEWATER LABS" in carried and "MARIA OKAFOR" not in carried
    assert refers_back("When did he join?") and not refers_back("When was the company founded?")


def test_a_sessions_context_never_repeats_a_chunk_in_full(index: MiniRAGIndex) -> None:
    session = index.session()
    turns = [session.query(q, top_k=3) for q in CHAIN]
    contexts = "\n".join(t.to_context() for t in turns)
    shown = {c.chunk_id: c.text for t in turns for c in t.result.chunks}
    assert len(shown) < sum(len(t.result.chunks) for t in turns)  # the chain did return a chunk twice
    for text in shown.values():
        assert contexts.count(text) == 1
    repeated = [t for t in turns[1:] if set(t.passages) - set(t.new)]
    assert repeated and all(t.reference(c) in t.to_context() for t in repeated for c in set(t.passages) - set(t.new))
    # without the session, the same questions send every chunk in full each time
    alone = "\n".join(index.query(q, top_k=3).to_context() for q in CHAIN)
    assert index.embedder.count_tokens(contexts) < index.embedder.count_tokens(alone)


def test_a_session_round_trips_through_json(index: MiniRAGIndex) -> None:
    session = index.session(max_entities=50)
    for question in CHAIN[:2]:
        session.query(question, top_k=3)
    restored = MiniRAGSession.from_json(index, session.to_json())
    assert restored.to_dict() == session.to_dict()
    a, b = session.query(CHAIN[2], top_k=3), restored.query(CHAIN[2], top_k=3)
    assert (a.passages, a.new, a.carried) == (b.passages, b.new, b.carried)
    assert restored.to_dict() == session.to_dict()
    assert "Acme Robotics was founded" not in session.to_json()  # ids and scores, not the index's text
    with pytest.raises(ValueError, match="saved session"):
        MiniRAGSession.from_json(index, '{"format": 1, "mode": "mini"}')
    with pytest.raises(ValueError, match="JSON"):
        MiniRAGSession.from_json(index, "not json")


def test_a_session_keeps_within_its_limits(index: MiniRAGIndex) -> None:
    session = index.session(max_entities=3, max_edges=2, max_passages=2)
    for question in CHAIN:
        session.query(question, top_k=3)
        assert len(session.entities) <= 3 and len(session.edges) <= 2 and len(session.passages) <= 2
    kept = set(session.entities)
    assert all(u in kept and v in kept for u, v in session.edges)
    last_turn = session.turns[-1]
    assert {n for n, _ in session.passages.values()} <= set(last_turn.passages)  # the latest passages kept
    with pytest.raises(ValueError):
        index.session(max_entities=0)


def test_a_session_leaves_the_index_unchanged(index: MiniRAGIndex) -> None:
    graph, vectors, files = _graph_state(index), _vector_state(index), _files(index.workdir)
    session = index.session()
    for question in CHAIN:
        session.query(question, top_k=3)
    assert _graph_state(index) == graph
    _assert_same_vectors(_vector_state(index), vectors)
    assert _files(index.workdir) == files


def test_new_chunks_bounds_what_a_follow_up_sends_in_full(index: MiniRAGIndex) -> None:
    free = index.session(admit_ratio=None, rows_of_new_chunks=False)
    bounded = index.session(new_chunks=0, admit_ratio=None, rows_of_new_chunks=False)
    tokens = {"free": 0, "bounded": 0}
    for question in [*CHAIN, "Which river runs through Boston?"]:
        wide, narrow = free.query(question, top_k=3), bounded.query(question, top_k=3)
        tokens["free"] += index.embedder.count_tokens(wide.to_context())
        tokens["bounded"] += index.embedder.count_tokens(narrow.to_context())
        if len(bounded.turns) == 1:
            assert narrow.passages == wide.passages  # the first turn is not bounded
        else:
            assert narrow.new == [] and set(narrow.passages) <= set(wide.passages) | set(bounded.passages)
    assert any(set(t.passages) - set(free.turns[0].passages) for t in free.turns[1:])
    assert tokens["bounded"] < tokens["free"]  # the free session sent new chunks in a follow-up
    assert MiniRAGSession.from_json(index, bounded.to_json()).new_chunks == 0
