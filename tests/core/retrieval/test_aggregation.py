"""The entity graph's aggregation (LeanRAG): kept current by inserts and deletes (equal to the
rebuilt index's), and the bottom-up retrieval option that shows it in the context."""

from __future__ import annotations

import pytest

from conversation import DOCS, conversation_index
from minirag_core.graph.aggregation import aggregate
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.llm.callable_backend import CallableBackend
from minirag_core.retrieval.extensions.aggregated import lca_clusters
from minirag_core.types import Document

MORE = [Document("lisbon", "Lisbon is the capital of Portugal. Lisbon lies on the Tagus river."),
        Document("okafor", "Maria Okafor studied engineering in Porto and later taught at the University of Porto.")]
QUESTION = "Where did the founder of Acme Robotics study?"


def test_aggregation_after_inserts_and_deletes_equals_the_rebuilt_index(embedder) -> None:
    grown = MiniRAGIndex(None, embedder=embedder, workers=1)
    grown.insert(DOCS[:3])
    before = grown.sources.aggregation().to_dict()
    grown.insert(DOCS[3:])
    grown.insert(MORE)  # "okafor" changed: replaced
    assert grown.sources.aggregation().to_dict() != before  # recomputed after the writes
    grown.delete(["trams", "boston"])
    final = [d for d in DOCS if d.id not in {"trams", "boston", "okafor"}] + MORE
    rebuilt = MiniRAGIndex(None, embedder=embedder, workers=1)
    rebuilt.insert(list(reversed(final)))
    kept = grown.sources.aggregation()
    assert kept.to_dict() == rebuilt.sources.aggregation().to_dict()
    assert kept.clusters and kept.relations  # not an empty aggregation that trivially agrees
    assert not any("MASSACHUSETTS" in c.entities for c in kept.clusters.values())  # a deleted page's entity left


def test_the_hierarchy_is_a_tree_with_lowest_common_ancestors() -> None:
    # two dense groups joined by one bridge, plus an entity with no relation
    edges = [(a, b) for group in ("abcd", "wxyz") for a in group for b in group if a < b] + [("d", "w")]
    found = aggregate(list("abcdwxyz") + ["lonely"], edges)
    level_one = {c.id: set(c.entities) for c in found.clusters.values() if c.level == 1}
    assert sorted(map(sorted, level_one.values())) == [list("abcd"), list("wxyz")]
    assert "lonely" not in found.parent
    top = found.lowest_common_ancestor("a", "z")
    assert top is not None and found.clusters[top].level == 2
    assert found.lowest_common_ancestor("a", "b") == found.parent["a"]
    assert lca_clusters(found, ["a", "z"]) == [found.parent["a"], found.parent["z"], top]
    assert [(r.source, r.target, r.strength) for r in found.relations] == [(found.parent["a"], found.parent["w"], 1)]
    assert aggregate(list("abcdwxyz"), reversed(edges)).to_dict() == aggregate(list("wxyzabcd"), edges).to_dict()


@pytest.fixture(scope="module")
def index(embedder) -> MiniRAGIndex:
    return conversation_index(embedder)


def test_aggregated_retrieval_keeps_the_chunks_and_shows_clusters(index: MiniRAGIndex) -> None:
    plain = index.query(QUESTION, top_k=3)
    lean = index.query(QUESTION, top_k=3, aggregate=True)
    assert [c.chunk_id for c in lean.chunks] == [c.chunk_id for c in plain.chunks]
    evidence = lean.aggregated
    assert evidence is not None and plain.aggregated is None
    assert "ACME ROBOTICS" in evidence.anchors
    assert any("ACME ROBOTICS" in c.entity_ids for c in evidence.clusters)
    inside = {e for c in evidence.clusters for e in index.sources.aggregation().clusters[c.id].entities}
    assert all(set(p.nodes) <= inside for p in evidence.paths)
    context = lean.to_context()
    assert "-----Clusters-----" in context and "-----Key Relationships-----" not in context
    assert index.embedder.count_tokens(context) < index.embedder.count_tokens(plain.to_context())
    assert lean.to_dict()["aggregated"]["clusters"]


def test_a_model_writes_the_cluster_summaries(embedder) -> None:
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return "A robotics company and the engineer who founded it."

    offline = MiniRAGIndex(None, embedder=embedder)  # extraction and query mapping stay offline
    with_model = MiniRAGIndex(None, embedder=embedder, workers=1, llm=CallableBackend("scripted", reply),
                              extractor=offline.extractor, query_mapper=offline.query_mapper)
    with_model.insert(DOCS)
    lean = with_model.query(QUESTION, top_k=3, aggregate=True)
    assert lean.aggregated is not None
    assert lean.aggregated.clusters[0].summary == "A robotics company and the engineer who founded it."
    assert any("Maria Okafor" in p for p in prompts)
