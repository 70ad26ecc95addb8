"""Sec. 3.2.2's chunk ranking: path chunks filtered to the query-relevant pool, the graph term
added to relevance, bridge-reached chunks joining the ranking."""

from __future__ import annotations

import pytest

from minirag_core.retrieval.topology.chunk_ranking import RankWeights, add_bridges, rank_chunks
from minirag_core.scores import top_ids
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document

RELEVANCE = {"a": 3.0, "b": 2.5, "c": 2.0, "d": 1.0, "e": 0.5}
WEIGHTS = RankWeights(dense=2.0, lexical=1.0, graph=0.5)


def test_only_path_chunks_inside_the_pool_rank_with_the_graph_term_added() -> None:
    graph = {"b": 4.0, "c": 2.0, "e": 8.0}  # "e" is on a path but outside the pool of the 3 most relevant
    ranked = rank_chunks(RELEVANCE, graph, top_ids(RELEVANCE, 3), WEIGHTS)
    assert ranked == [("b", pytest.approx(2.5 + 0.5 * 0.5)), ("c", pytest.approx(2.0 + 0.5 * 0.25))]


def test_a_wider_pool_lets_a_less_relevant_path_chunk_in() -> None:
    graph = {"b": 4.0, "e": 8.0}
    narrow = [c for c, _ in rank_chunks(RELEVANCE, graph, top_ids(RELEVANCE, 3), WEIGHTS)]
    wide = [c for c, _ in rank_chunks(RELEVANCE, graph, top_ids(RELEVANCE, 5), WEIGHTS)]
    assert narrow == ["b"]
    assert wide == ["b", "e"]  # "e": 0.5 + 0.5 * 1.0 = 1.0, still below "b" (2.5 + 0.25)


def test_bridges_raise_ranked_chunks_and_bring_in_unranked_ones() -> None:
    ranked = rank_chunks(RELEVANCE, {"b": 1.0}, top_ids(RELEVANCE, 3), WEIGHTS)
    out = dict(add_bridges(ranked, RELEVANCE, {"b": 1.0}, {"b": 0.5, "d": 1.0}, WEIGHTS, bridge_weight=1.5))
    assert out["b"] == pytest.approx(2.5 + 0.5 + 1.5 * 0.5)
    assert out["d"] == pytest.approx(1.0 + 1.5 * 1.0)  # reached only through a bridge: its relevance + bridge
    assert set(out) == {"b", "d"}



def test_mini_scores_follow_its_ranking(embedder, tmp_path) -> None:
    """Mini's reported scores never rise down its ranking, or a consumer that sorts by score (a
    fusion retriever) would undo it; a chunk on no path keeps its place by relevance."""
    docs = [Document("path1", "Corvina Holt chairs the school committee in Delmere."),
            Document("path2", "Corvina Holt bought a boat from a fisherman."),
            Document("plain", "the school committee chair is elected each spring, and the school committee "
                              "chair runs every school committee meeting."),
            Document("other", "rain fell all week and the roads flooded near the mill.")]
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(docs)
    result = index.query("Which school committee does Corvina Holt chair?", mode="mini")
    ranked = [(c.doc_id, c.via) for c in result.chunks]
    assert ranked[:3] == [("path1", "relevance"), ("plain", "relevance"), ("path2", "relevance")]
    scores = [c.score for c in result.chunks]
    assert all(a >= b for a, b in zip(scores, scores[1:]))
