"""The top chunks cover the question's entities between them (aspect_coverage.py)."""

from __future__ import annotations

import pytest

from minirag_core.retrieval.extensions.aspect_coverage import cover_aspects, linked_aspects, merge_named, named_aspects
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document


def test_a_chunk_naming_a_new_entity_moves_up_and_scores_stay_sorted() -> None:
    ranked = [("a", 3.0), ("b", 2.9), ("c", 2.5), ("d", 1.0)]
    named = {"a": frozenset({0}), "b": frozenset({0}), "c": frozenset({1}), "d": frozenset({1})}
    out = cover_aspects(ranked, named, n_aspects=2, weight=0.4, depth=3)
    # bonus = 0.4 x 3.0 / 2 = 0.6 per newly named entity: a stays first; c (3.1) before b (2.9); d is past the depth
    assert [c for c, _ in out] == ["a", "c", "b", "d"]
    scores = [s for _, s in out]
    assert scores == pytest.approx([3.0, 3.0, 2.9, 1.0])  # c's 3.1 capped just below a's 3.0
    assert all(x > y for x, y in zip(scores, scores[1:]))  # strictly: sorting by score keeps the order


def test_the_most_relevant_chunk_keeps_the_first_place() -> None:
    ranked = [("a", 3.0), ("b", 2.9)]
    named = {"a": frozenset(), "b": frozenset({0, 1})}  # b names both entities, a neither
    assert [c for c, _ in cover_aspects(ranked, named, n_aspects=2, weight=1.0, depth=2)] == ["a", "b"]


def test_one_entity_or_no_weight_leaves_the_ranking_alone() -> None:
    ranked = [("a", 3.0), ("b", 2.9), ("c", 2.5)]
    named = {"c": frozenset({0})}
    assert cover_aspects(ranked, named, n_aspects=1, weight=0.4, depth=3) == ranked
    assert cover_aspects(ranked, named, n_aspects=2, weight=0.0, depth=3) == ranked


def test_entities_are_named_as_whole_words_in_any_case() -> None:
    named = named_aspects(["France", "Warsaw Pact"], {"x": "FRANCE and the warsaw pact.", "y": "Frances, Warsaw"})
    assert named == {"x": frozenset({0, 1}), "y": frozenset()}


def test_a_chunk_names_an_entity_through_the_nodes_it_was_matched_to() -> None:
    matches = {"Jane": ["JANE DOE"], "harbour": ["HARBOUR", "OLD HARBOUR"]}
    links = {"x": ["JANE DOE", "BOAT"], "y": ["OLD HARBOUR"], "z": ["BOAT"]}
    linked = linked_aspects(["Jane", "harbour", "nowhere"], matches, links)
    assert linked == {"x": frozenset({0}), "y": frozenset({1}), "z": frozenset()}
    by_text = {"x": frozenset({2}), "z": frozenset({1})}
    assert merge_named(by_text, linked) == {"x": frozenset({0, 2}), "y": frozenset({1}), "z": frozenset({1})}


def test_mini_puts_the_second_entity_in_the_top_chunks(embedder, tmp_path) -> None:
    dominant = [f"The Alderwick canal carries barges of grain past mill number {i}; the canal was dug by hand "
                f"and the canal barges still carry grain along the canal today." for i in range(6)]
    docs = [Document(f"canal{i}", t) for i, t in enumerate(dominant)]
    docs.append(Document("rail", "A small station in Brenmoor opened in the spring, when the line was extended north."))
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(docs)
    question = "Which goods did the barges carry along the Alderwick canal past the mill, and what opened in Brenmoor?"
    assert {"Alderwick", "Brenmoor"} <= set(index.query(question, mode="mini").mapping.entities)

    without = [c.doc_id for c in index.query(question, mode="mini", top_k=3, coverage_weight=0.0).chunks]
    covered = index.query(question, mode="mini", top_k=3, coverage_weight=0.4)
    assert "rail" not in without  # the canal's clones fill every slot on relevance alone
    assert "rail" in [c.doc_id for c in covered.chunks]
    assert any("coverage" in note for note in covered.notes)  # the re-order is said, not silent


def test_a_speaker_tag_names_its_speaker(embedder, tmp_path, monkeypatch) -> None:
    """A chat line "JaneDoe: ..." never writes "Jane" as a word, yet the session names her: the
    graph links it to the node the question's "Jane" is matched to, so a chunk that merely writes
    "Jane" does not win the coverage bonus over it."""
    import minirag_core.retrieval.modes.mini as mini

    docs = [Document("o1", "Time: 20260101_10:00\nTomBrook: Which ferry to Ostby did you book?\n"
                           "SamReed: I booked the nine o'clock ferry to Ostby."),
            Document("o2", "Time: 20260102_10:00\nTomBrook: The ferry to Ostby was late again.\n"
                           "SamReed: The Ostby ferry is always late."),
            Document("answer", "Time: 20260103_12:00\nJaneDoe: I booked the late ferry to Ostby instead.\n"
                               "TomBrook: Fine, see you at the pier."),
            Document("decoy", "Time: 20260104_12:00\nSamReed: Jane said the ferry pier cafe opens at seven.")]
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(docs)
    question = "Which ferry to Ostby did Jane book?"
    covered = index.query(question, mode="mini", top_k=2, coverage_weight=0.4)
    assert {"Jane", "Ostby"} <= set(covered.mapping.entities)
    assert [c.doc_id for c in covered.chunks] == ["o1", "answer"]
    monkeypatch.setattr(mini, "linked_aspects", lambda *args: {})  # names matched as text only
    by_text = index.query(question, mode="mini", top_k=2, coverage_weight=0.4)
    assert [c.doc_id for c in by_text.chunks] == ["o1", "decoy"]
