"""Metadata filters: the filter dict read into the core form, and every mode retrieving from the
passing documents alone: never a failing chunk, k chunks when k pass, and the same top k as an
index holding only the passing documents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import lihuaworld_documents
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval import filtered_sources
from minirag_core.retrieval.filtered_sources import FilteredGraphView
from minirag_core.retrieval.filters import (AllOf, AnyOf, Condition, FilterError, Not, as_filter, from_dict,
                                            from_where_args)
from minirag_core.types import Document

QUESTIONS = ["What did Li Hua plan for the weekend?", "Who recommended a restaurant to Li Hua?",
             "When is the next football match?"]
MODES = ("naive", "light", "mini")


def test_the_filter_dict_reads_into_conditions_and_groups():
    assert from_dict({"year": 2020}) == Condition("year", "eq", 2020)
    assert from_dict({"lang": {"$in": ["en", "de"]}}) == Condition("lang", "in", ("en", "de"))
    assert from_dict({"year": {"$gte": 2020, "$lt": 2024}}) == AllOf((Condition("year", "gte", 2020),
                                                                      Condition("year", "lt", 2024)))
    assert from_dict({"$or": [{"a": 1}, {"b": {"$ne": 2}}]}) == AnyOf((Condition("a", "eq", 1),
                                                                       Condition("b", "ne", 2)))
    assert from_dict({"$and": [{"a": 1}], "b": {"$nin": [3]}}) == AllOf((Condition("a", "eq", 1),
                                                                        Condition("b", "nin", (3,))))
    assert from_dict({"$not": {"a": 1}}) == Not(Condition("a", "eq", 1))


@pytest.mark.parametrize("spec, metadata, expected", [
    ({"year": 2020}, {"year": 2020.0}, True),
    ({"year": 2020}, {"year": "2020"}, False),
    ({"flag": True}, {"flag": 1}, False),
    ({"year": {"$gt": 2020}}, {"year": 2021}, True),
    ({"year": {"$gte": 2020, "$lte": 2020}}, {"year": 2020}, True),
    ({"year": {"$lt": 2020}}, {"year": "2019"}, False),  # a range between a string and a number holds for nothing
    ({"name": {"$gte": "m"}}, {"name": "mary"}, True),
    ({"lang": {"$in": ["en", "de"]}}, {"lang": "de"}, True),
    ({"lang": {"$nin": ["en", "de"]}}, {"lang": "fr"}, True),
    ({"lang": {"$ne": "en"}}, {}, True),  # a missing key equals nothing
    ({"lang": {"$in": ["en"]}}, {}, False),
    ({"tags": {"$contains": "a"}}, {"tags": ["a", "b"]}, True),
    ({"$or": [{"a": 1}, {"b": 2}]}, {"b": 2}, True),
    ({"$and": [{"a": 1}, {"b": 2}]}, {"a": 1, "b": 3}, False),
    ({"$not": {"a": 1}}, {"a": 2}, True),
])
def test_conditions_match_metadata(spec, metadata, expected):
    assert from_dict(spec).matches(metadata) is expected


@pytest.mark.parametrize("spec, message", [
    ({"year": {"$between": [1, 2]}}, "unknown filter operator 'between'"),
    ({"$xor": [{"a": 1}]}, "unknown filter operator '$xor'"),
    ({"lang": {"$in": "en"}}, "needs a non-empty list"),
    ({"year": {"$gt": [1]}}, "compares with a number or a string"),
    ({"year": {"gt": 1}}, "start with '$'"),
    ({"$and": []}, "non-empty list of filters"),
    ({}, "pass None for no filter"),
    ({"meta": {"a": 1}}, "start with '$'"),
])
def test_a_bad_filter_gets_a_clear_error(spec, message):
    with pytest.raises(FilterError, match=message.replace("$", r"\$").replace("(", r"\(")):
        from_dict(spec)


def test_where_pairs_are_anded_and_typed_values_match_both_ways():
    where = from_where_args(["part=1", "kind=odd"])
    assert where.matches({"part": 1, "kind": "odd"}) and where.matches({"part": "1", "kind": "odd"})
    assert not where.matches({"part": 1, "kind": "even"})
    assert from_where_args([]) is None
    with pytest.raises(FilterError, match="key=value"):
        from_where_args(["part"])
    with pytest.raises(FilterError, match="a filter is a dict"):
        as_filter(["part", 1])


def _documents() -> list[Document]:
    docs = lihuaworld_documents(limit=36)
    return [Document(id=d.id, text=d.text, metadata={**d.metadata, "part": i % 3, "rank": i,
                                                      "kind": "odd" if i % 2 else "even"})
            for i, d in enumerate(docs)]


#: filters and the documents they pass (by the metadata given above)
FILTERS = {
    "part": ({"part": 1}, lambda m: m["part"] == 1),
    "range-or": ({"$or": [{"rank": {"$lt": 8}}, {"$and": [{"kind": "odd"}, {"part": {"$in": [0]}}]}]},
                 lambda m: m["rank"] < 8 or (m["kind"] == "odd" and m["part"] == 0)),
}


@pytest.fixture(scope="module")
def indexes(embedder, tmp_path_factory):
    """The whole set (networkx in memory, and SQLite), and an index of each filter's passing documents."""
    docs = _documents()
    full = MiniRAGIndex(None, embedder=embedder)
    full.insert(docs)
    sqlite = MiniRAGIndex(tmp_path_factory.mktemp("sqlite") / "wd", embedder=embedder, graph_backend="sqlite")
    sqlite.insert(docs)
    subsets = {}
    for name, (_, passes) in FILTERS.items():
        subsets[name] = MiniRAGIndex(None, embedder=embedder)
        subsets[name].insert([d for d in docs if passes(d.metadata)])
    return full, sqlite, subsets


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(FILTERS))
def test_a_filtered_query_equals_the_query_on_the_passing_documents_alone(indexes, mode, name):
    full, _, subsets = indexes
    spec, passes = FILTERS[name]
    for question in QUESTIONS:
        filtered = full.query(question, mode=mode, filter=spec, top_k=5)
        alone = subsets[name].query(question, mode=mode, top_k=5)
        assert all(passes(c.metadata) for c in filtered.chunks)
        assert len(filtered.chunks) == 5  # at least 5 chunks pass each filter
        assert [c.chunk_id for c in filtered.chunks] == [c.chunk_id for c in alone.chunks], question
        assert [c.score for c in filtered.chunks] == pytest.approx([c.score for c in alone.chunks], abs=1e-3)


@pytest.mark.parametrize("mode", MODES)
def test_k_passing_chunks_whatever_k(indexes, mode):
    full, _, _ = indexes
    passing = [d.id for d in _documents() if d.metadata["part"] == 2]
    for k in (3, 8, len(passing) + 4):
        result = full.query(QUESTIONS[0], mode=mode, filter={"part": 2}, top_k=k, token_budget=10**6)
        assert len(result.chunks) == min(k, len(passing))
        assert {c.doc_id for c in result.chunks} <= set(passing)


@pytest.mark.parametrize("mode", MODES)
def test_sqlite_store_filters_as_the_in_memory_graph_does(indexes, mode):
    full, sqlite, _ = indexes
    spec = FILTERS["range-or"][0]
    for question in QUESTIONS:
        assert ([c.chunk_id for c in sqlite.query(question, mode=mode, filter=spec).chunks]
                == [c.chunk_id for c in full.query(question, mode=mode, filter=spec).chunks])


def _weighted_edges(arrays) -> dict[tuple[str, str], float]:
    sub = arrays.expand(arrays.ids, 0, len(arrays.ids))
    return {(sub.nodes[a], sub.nodes[b]): round(w, 6) for a, b, w in zip(sub.left.tolist(), sub.right.tolist(),
                                                                          sub.weight.tolist())}


@pytest.mark.parametrize("store", ["networkx", "sqlite"])
def test_passing_relations_weigh_what_the_passing_chunks_give_them(indexes, store):
    full, sqlite, subsets = indexes
    index = full if store == "networkx" else sqlite
    view = FilteredGraphView(index.graph_store, index.registry.passing(from_dict(FILTERS["part"][0])).chunks)
    filtered = _weighted_edges(view.relation_arrays())
    assert filtered == _weighted_edges(subsets["part"].graph_store.relation_arrays())
    whole = _weighted_edges(index.graph_store.relation_arrays())
    assert any(whole[pair] != weight for pair, weight in filtered.items())  # some relation is stated elsewhere too


def test_mini_walks_only_entities_of_passing_chunks(indexes):
    full, _, _ = indexes
    result = full.query(QUESTIONS[1], mode="mini", filter={"part": 0})
    passing_chunks = full.registry.passing(from_dict({"part": 0})).chunks
    backed = {e for es in full.graph_store.chunk_entities(sorted(passing_chunks)).values() for e in es}
    walked = set(result.seeds) | set(result.answer_candidates) | {n for p in result.paths for n in p.nodes}
    walked |= {n for e in result.key_edges for n in (e.source, e.target)}
    assert walked and walked <= backed


def test_chroma_search_past_the_memory_limit_gets_the_filter(indexes, monkeypatch):
    """Past the in-memory limit chunks are searched in Chroma's index (first windows only): the
    search gets a ``where`` on the passing documents and finds what an index of them finds."""
    full, _, subsets = indexes
    spec, passes = FILTERS["part"]
    wheres = []
    query = full.vectors.store.query
    monkeypatch.setattr(full.vectors.store, "query", lambda *a, **kw: wheres.append(kw.get("where")) or query(*a, **kw))
    for index in (full, subsets["part"]):
        monkeypatch.setattr(index.vectors, "in_memory_limit", 0)
        index.vectors._counts.clear()
    try:
        ann = full.query(QUESTIONS[0], mode="naive", filter=spec)
        alone = subsets["part"].query(QUESTIONS[0], mode="naive")
        # too many passing documents to name: a wider search without `where`, kept to the passing chunks
        monkeypatch.setattr(filtered_sources, "MAX_WHERE_DOCUMENTS", 3)
        wider = full.query(QUESTIONS[0], mode="naive", filter=spec)
    finally:
        full.vectors._counts.clear(), subsets["part"].vectors._counts.clear()
    assert len(ann.chunks) == 5 and all(passes(c.metadata) for c in ann.chunks)
    assert [c.chunk_id for c in ann.chunks] == [c.chunk_id for c in alone.chunks]
    passing_docs = sorted(d.id for d in _documents() if passes(d.metadata))
    assert {"doc_id": {"$in": passing_docs}} in wheres and wheres[-1] is None
    assert [c.chunk_id for c in wider.chunks] == [c.chunk_id for c in alone.chunks]


def test_no_passing_document_returns_no_chunks_and_says_why(indexes):
    full, _, _ = indexes
    result = full.query(QUESTIONS[0], mode="mini", filter={"part": 7})
    assert result.chunks == [] and any("no document passes" in n for n in result.notes)
    with pytest.raises(FilterError, match="unknown filter operator"):
        full.query(QUESTIONS[0], filter={"part": {"$like": 1}})


DOCS_SITE = Path(os.environ.get("MINIRAG_DATA_ROOT") or Path(__file__).resolve().parents[4] / "shared" / "data") \
    / "pydantic_docs" / "corpus"


SITE_FILTER = {"$or": [{"section": "examples"}, {"order": {"$in": [0, 2, 4, 9, 11]}}]}


@pytest.fixture(scope="module")
def site_indexes(embedder):
    """Pages of a documentation site indexed whole, and the pages ``SITE_FILTER`` passes alone."""
    if not DOCS_SITE.is_dir():
        pytest.skip("development set pydantic_docs not available")
    pages = sorted(sorted(DOCS_SITE.rglob("*.md"), key=lambda p: p.stat().st_size)[10:26])  # 16 short pages
    docs = [Document(id=p.relative_to(DOCS_SITE).as_posix(), text=p.read_text(encoding="utf-8"),
                     metadata={"section": p.relative_to(DOCS_SITE).parts[0], "order": i}) for i, p in enumerate(pages)]
    passes = from_dict(SITE_FILTER).matches
    full, alone = MiniRAGIndex(None, embedder=embedder, workers=1), MiniRAGIndex(None, embedder=embedder, workers=1)
    full.insert(docs)
    alone.insert([d for d in docs if passes(d.metadata)])
    return full, alone


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_filtered_pages_of_a_documentation_site_equal_an_index_of_them(site_indexes, mode):
    """Markdown pages of several chunks each, with headings and links between pages: the filtered
    view holds their subjects and the relations they state as an index of the passing pages does."""
    full, alone = site_indexes
    passes = from_dict(SITE_FILTER).matches
    assert alone.stats()["chunks"] > len(alone.document_ids())  # pages of several chunks
    for question in ["How do I use Pydantic models with an ORM?", "How do I install pydantic with email support?",
                     "What does strict mode change when validating?"]:
        filtered = full.query(question, mode=mode, filter=SITE_FILTER)
        expected = alone.query(question, mode=mode)
        assert all(passes(c.metadata) for c in filtered.chunks) and len(filtered.chunks) == 5
        assert [c.chunk_id for c in filtered.chunks] == [c.chunk_id for c in expected.chunks], question
