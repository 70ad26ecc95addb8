"""Mini mode starts from the ranking the index makes without the graph (dense + BM25) and lets
graph evidence move a chunk above a more relevant one only when it outweighs the difference;
each hit's label says what ranked it."""

from __future__ import annotations

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.common import query_vector
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.retrieval.topology.chunk_ranking import RankWeights, lifted_above, query_relevance
from minirag_core.scores import top_ids
from minirag_core.types import Document

DOCS = [
    Document("film", "The Quiet Harbor is a 1998 drama film directed by Osric Vanterpool, shot on the coast of Wales."),
    Document("osric", "Osric Vanterpool\n\nOsric Vanterpool was born in Keswick Marsh in 1950 and trained as a "
                      "painter before he made films."),
    Document("d1", "Directors are often born far from where their films are shot; a director's birthplace rarely "
                   "shapes the film."),
    Document("d2", "Where a director was born matters less than the films the director has made, critics say."),
    Document("d3", "The harbor was quiet in the morning, and the fishing boats were born back to shore by the tide."),
    Document("d4", "Rain fell all week and the roads flooded near the mill."),
]


@pytest.fixture(scope="module")
def index(embedder, tmp_path_factory):
    built = MiniRAGIndex(tmp_path_factory.mktemp("adds") / "wd", embedder=embedder)
    built.insert(DOCS)
    return built


def relevance_order(index: MiniRAGIndex, query: str) -> list[str]:
    """Chunk ids by the graph-free ranking: dense + BM25 relevance with mini's weights."""
    settings = RetrievalSettings()
    sources = index.sources
    relevance = query_relevance(sources.chunk_dense_scores(query_vector(sources, query)),
                                sources.chunk_lexical_scores(query),
                                RankWeights(settings.dense_weight, settings.lexical_weight, settings.graph_weight))
    return top_ids(relevance, len(relevance))


def test_a_question_naming_no_graph_entity_gets_the_graph_free_top_k(index) -> None:
    query = "wet weather and flooding"
    result = index.query(query, mode="mini", top_k=4)
    assert not result.seeds
    assert [c.chunk_id for c in result.chunks] == relevance_order(index, query)[:4]
    assert {c.via for c in result.chunks} == {"relevance"}
    assert any("ranked by query relevance" in note for note in result.notes)


def test_a_bridge_lifts_the_second_hop_above_a_more_relevant_chunk_and_says_so(index) -> None:
    query = "Where was the director of The Quiet Harbor born?"
    order = relevance_order(index, query)
    result = index.query(query, mode="mini", top_k=6)
    ranked = [c.chunk_id for c in result.chunks]
    hop = next(c for c in result.chunks if c.doc_id == "osric")
    passed = [c for c in result.chunks if order.index(c.chunk_id) < order.index(hop.chunk_id)
              and ranked.index(c.chunk_id) > ranked.index(hop.chunk_id)]
    assert passed, "the bridge moved the second hop above at least one more relevant chunk"
    assert hop.via == "graph"
    assert all(c.via == "relevance" for c in passed)  # what it passed was ranked by relevance


def test_graph_evidence_that_does_not_outweigh_relevance_leaves_the_order(index) -> None:
    """With the graph terms scaled far down, mini's top k is the relevance ranking."""
    query = "Where was the director of The Quiet Harbor born?"
    result = index.query(query, mode="mini", top_k=5, graph_weight=1e-9, bridge_weight=1e-9, coverage_weight=0.0)
    assert [c.chunk_id for c in result.chunks] == relevance_order(index, query)[:5]
    assert {c.via for c in result.chunks} == {"relevance"}


def test_lifted_above_names_only_chunks_placed_over_a_higher_prior() -> None:
    prior = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}
    assert lifted_above([("a", 3.0), ("b", 2.0), ("c", 1.0)], prior) == set()
    assert lifted_above([("c", 9.0), ("a", 3.0), ("d", 2.5), ("b", 2.0)], prior) == {"c", "d"}
