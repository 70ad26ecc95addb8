"""LlamaIndex ``MetadataFilters`` on MiniRAG's retrievers: the translation into the core filter,
and ``filters=`` on a core index and on a property graph keeping retrieval to passing documents."""

from __future__ import annotations

import pytest
from llama_index.core import Document, PropertyGraphIndex
from llama_index.core.llms import MockLLM
from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

from llama_index_minirag import MiniLMEmbedding, MiniRAGExtractor, MiniRAGPGRetriever, MiniRAGRetriever
from llama_index_minirag.filters import to_core_filter
from minirag_core.retrieval.filters import AllOf, AnyOf, Condition, FilterError, Not

from conftest import lihuaworld_documents

QUESTION = "What did Li Hua plan with his friends?"


def _f(key, value, op=FilterOperator.EQ) -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=op)


def test_operators_and_conditions_translate():
    assert to_core_filter(MetadataFilters(filters=[_f("year", 2020, FilterOperator.GTE)])) == Condition("year", "gte", 2020)
    both = MetadataFilters(filters=[_f("year", 2020, FilterOperator.GT), _f("lang", ["en"], FilterOperator.IN)])
    assert to_core_filter(both) == AllOf((Condition("year", "gt", 2020), Condition("lang", "in", ("en",))))
    either = MetadataFilters(filters=[_f("a", 1), _f("b", 2, FilterOperator.NE)], condition=FilterCondition.OR)
    assert to_core_filter(either) == AnyOf((Condition("a", "eq", 1), Condition("b", "ne", 2)))
    neither = MetadataFilters(filters=[_f("a", 1), _f("b", 2)], condition=FilterCondition.NOT)
    assert to_core_filter(neither) == Not(AnyOf((Condition("a", "eq", 1), Condition("b", "eq", 2))))
    nested = MetadataFilters(filters=[_f("year", 2024, FilterOperator.LTE), either])
    assert to_core_filter(nested) == AllOf((Condition("year", "lte", 2024), to_core_filter(either)))
    tags = to_core_filter(MetadataFilters(filters=[_f("tags", ["x", "y"], FilterOperator.ANY)]))
    assert tags.matches({"tags": ["y"]}) and not tags.matches({"tags": ["z"]})
    every = to_core_filter(MetadataFilters(filters=[_f("tags", ["x", "y"], FilterOperator.ALL)]))
    assert every.matches({"tags": ["x", "y", "z"]}) and not every.matches({"tags": ["x"]})
    assert to_core_filter({"year": {"$lt": 3}}) == Condition("year", "lt", 3)
    assert to_core_filter(None) is None


def test_unsupported_operators_and_empty_filters_get_clear_errors():
    with pytest.raises(FilterError, match="'text_match' on 'title' is not supported"):
        to_core_filter(MetadataFilters(filters=[_f("title", "a", FilterOperator.TEXT_MATCH)]))
    with pytest.raises(FilterError, match="holds no filter"):
        to_core_filter(MetadataFilters(filters=[]))


def _documents() -> list[Document]:
    return [Document(text=d.text, id_=d.id, metadata={"session": d.id, "part": i % 3})
            for i, d in enumerate(lihuaworld_documents(limit=15))]


@pytest.fixture(scope="module")
def embed_model(embedder):
    return MiniLMEmbedding(embedder)


@pytest.fixture(scope="module")
def pg_index(embed_model):
    return PropertyGraphIndex.from_documents(
        _documents(), kg_extractors=[MiniRAGExtractor(embed_model=embed_model)], embed_model=embed_model,
        llm=MockLLM(), use_async=False, embed_kg_nodes=False)


FILTERS = MetadataFilters(filters=[_f("part", 1), _f("session", "", FilterOperator.NE)])


@pytest.mark.parametrize("mode", ["naive", "light", "mini"])
def test_property_graph_retriever_takes_filters(pg_index, mode):
    passing = {d.id_ for d in _documents() if d.metadata["part"] == 1}
    retriever = MiniRAGRetriever.from_property_graph(pg_index, mode=mode, top_k=4, filters=FILTERS)
    nodes = retriever.retrieve(QUESTION)
    assert len(nodes) == 4 and all(n.node.metadata["minirag_doc_id"] in passing for n in nodes)
    sub = MiniRAGPGRetriever(pg_index.property_graph_store, mode=mode, top_k=4, filters=FILTERS)
    assert [n.node.node_id for n in sub.custom_retrieve(QUESTION)] == [n.node.node_id for n in nodes]


@pytest.mark.parametrize("mode", ["naive", "mini"])
def test_core_index_retriever_takes_filters(embedder, mode):
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document as CoreDocument

    index = MiniRAGIndex(None, embedder=embedder)
    index.insert([CoreDocument(id=d.id_, text=d.text, metadata=d.metadata) for d in _documents()])
    retriever = MiniRAGRetriever.from_index(index, mode=mode, top_k=3,
                                            filters=MetadataFilters(filters=[_f("part", 2)]))
    nodes = retriever.retrieve(QUESTION)
    assert len(nodes) == 3 and {n.node.metadata["part"] for n in nodes} == {2}
