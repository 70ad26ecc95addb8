"""Mini mode starts from the ranking the index makes without the graph (dense + BM25) and lets
graph evidence move a chunk above a more relevant one only when it outweighs the difference;
each hit's label says what ranked it."""

from __future__ import annotations

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.common import query_vector
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.retrieval.topology.chunk_ranking import RankWeights, lifted_above, query_relevance, spread_documents
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


def test_a_pages_later_sections_keep_only_a_share_of_the_graphs_evidence() -> None:
    """Two sections of page A lifted by the same graph evidence: the second keeps half of what the
    graph added, so page B's better-placed chunk passes it; B's own first chunk keeps its score."""
    relevance = {"a1": 2.0, "a2": 1.6, "b1": 2.0, "b2": 1.9, "c1": 1.0}
    ranked = [("a1", 3.0), ("a2", 2.8), ("b1", 2.5), ("b2", 1.9), ("c1", 1.1)]
    doc_of = {c: c[0] for c in relevance}
    spread = spread_documents(ranked, relevance, doc_of, 0.5)
    assert spread == [("a1", 3.0), ("b1", 2.5), ("a2", pytest.approx(2.2)), ("b2", 1.9), ("c1", 1.1)]
    assert spread_documents(ranked, relevance, doc_of, 0.0)[2:4] == [("b2", 1.9), ("a2", 1.6)]  # relevance alone
    assert spread_documents(ranked, relevance, doc_of, 1.0) == ranked
    assert spread_documents(ranked, relevance, {}, 0.0) == ranked  # no document known: nothing counted twice


def test_mini_counts_the_graph_once_per_document(embedder, tmp_path) -> None:
    """A three-section page one bridge away from the film: its first chunk keeps what the graph
    added, its later sections keep the share ``document_graph_share`` says; one-chunk documents
    are untouched."""
    page = Document("osric", "# Osric Vanterpool\n\nOsric Vanterpool was born in Keswick Marsh in 1950 and trained "
                             "as a painter before he made films.\n\n## Painting\n\nHis early canvases show the tidal "
                             "flats and the grey light of the estuary, sold in small galleries.\n\n## Later years\n\n"
                             "In his later years he kept bees, restored an old barn and wrote letters to local "
                             "newspapers about the weather.")
    built = MiniRAGIndex(tmp_path / "wd", embedder=embedder, chunk_tokens=40, chunk_overlap=0)
    built.insert([DOCS[0], page, *DOCS[2:]])
    query = "Where was the director of The Quiet Harbor born?"
    runs = {share: built.query(query, mode="mini", top_k=8, document_graph_share=share, max_chunks_per_document=0)
            for share in (1.0, 0.5, 0.0)}
    scores = {share: {c.chunk_id: c.score for c in r.chunks} for share, r in runs.items()}
    sections = [c.chunk_id for c in runs[1.0].chunks if c.doc_id == "osric"]
    assert len(sections) == 3
    first, later = sections[0], sections[1:]
    assert scores[0.0][first] == scores[0.5][first] == scores[1.0][first]
    assert all(scores[0.0][c] < scores[0.5][c] < scores[1.0][c] for c in later)
    others = [c.chunk_id for c in runs[1.0].chunks if c.doc_id != "osric"]
    assert all(scores[0.0][c] == scores[1.0][c] for c in others)
