"""Second-round bridging: the question's words a top chunk leaves unanswered, asked of the chunks
linked to it through the entities it mentions."""

from __future__ import annotations

import networkx as nx

from minirag_core.retrieval.extensions.residual import distinct_sources, link_specificity, residual_query, residual_scores
from minirag_core.storage.networkx_store import NetworkXGraphStore


def test_residual_keeps_the_question_words_the_chunk_lacks():
    chunk = "The MVP award is given after the World Series by the league."
    assert residual_query("Who was second pick in the 1999 draft of the league?", chunk) == \
        "who was second pick in 1999 draft of"
    assert residual_query("the league", chunk) == ""


def test_link_specificity_falls_with_how_many_chunks_mention_the_entity():
    assert link_specificity(1, 1000) == 1.0
    assert link_specificity(1000, 1000) == 0.0
    assert 0.0 < link_specificity(100, 1000) < link_specificity(10, 1000) < 1.0


def test_distinct_sources_takes_one_chunk_per_subject():
    ranked = [("a1", 2.0), ("a2", 1.9), ("b", 1.0), ("c", 0.5)]
    subjects = {"a1": ["A"], "a2": ["A"], "b": ["B"], "c": []}
    assert distinct_sources(ranked, subjects, 2) == [("a1", 1.0), ("b", 0.5)]
    assert distinct_sources(ranked, subjects, 5) == [("a1", 1.0), ("b", 0.5), ("c", 0.25)]


def _store(tmp_path) -> NetworkXGraphStore:
    """Source s mentions x (rare) and y (common); t1, t2 mention x; u1..u4 mention y."""
    store = NetworkXGraphStore(tmp_path / "g.json")
    g: nx.Graph = store.graph
    texts = {"s": "award league", "t1": "draft pick", "t2": "draft", "u1": "pick", "u2": "", "u3": "", "u4": ""}
    for chunk, text in texts.items():
        g.add_node(chunk, kind="chunk", text=text, doc_id=chunk, order=0, n_tokens=1, subjects=[])
    for entity in ("x", "y"):
        g.add_node(entity, kind="entity", name=entity, type="ORGANIZATION", description="", source_chunks=[])
    for chunk, entity in (("s", "x"), ("s", "y"), ("t1", "x"), ("t2", "x"), *((f"u{i}", "y") for i in range(1, 5))):
        g.add_edge(chunk, entity, kind="mention", description="")
    return store


def test_linked_chunks_score_by_relevance_to_the_residual_and_link_specificity(tmp_path):
    store = _store(tmp_path)
    asked: list[str] = []

    def relevance_of(texts: list[str]) -> list[dict[str, float]]:
        asked.extend(texts)
        return [{"s": 0.0, "t1": 1.0, "t2": 0.5, "u1": 1.0, "u2": 0.0, "u3": 0.0, "u4": 0.0} for _ in texts]

    scores, bridges = residual_scores(store, "league draft pick", [("s", 1.0)], relevance_of, total_chunks=7)
    assert asked == ["draft pick"]  # the words the source lacks
    assert "s" not in scores and scores["t1"] == 1.0 * link_specificity(3, 7)
    assert scores["t2"] == 0.5 * link_specificity(3, 7)
    assert scores["u1"] == link_specificity(5, 7) < scores["t1"]  # a commoner entity links weaker
    assert "u2" not in scores  # nothing above the floor
    assert (bridges[0].source, bridges[0].entity, bridges[0].target) == ("s", "x", "t1")
    floored, _ = residual_scores(store, "league draft pick", [("s", 1.0)], relevance_of, total_chunks=7, floor_rank=3)
    assert set(floored) == {"t1", "u1"}  # only what stands out above the 3rd best (0.5) counts
    assert residual_scores(store, "award league", [("s", 1.0)], relevance_of, total_chunks=7) == ({}, [])
