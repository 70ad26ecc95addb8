"""``MiniRAGRetriever(filter=...)`` and ``invoke(query, filter=...)``: LangChain's filter dict keeps
retrieval (and the top-up to k) to the documents whose metadata pass."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError
from stand_ins import HashEmbedder, NameListExtractor, NameMapper

from langchain_minirag import MiniRAGRetriever
from minirag_core.retrieval.filters import FilterError

QUESTION = "Who met Person4 at the harbour to talk about boats?"
YEARS = {f"d{i}": 2016 + i % 8 for i in range(24)}


@pytest.fixture(scope="module")
def retriever():
    texts = [f"Person{i} met Person{i + 1} at the harbour to talk about boats and the weather." for i in range(24)]
    metadatas = [{"year": YEARS[f"d{i}"], "lang": "de" if i % 3 == 0 else "en"} for i in range(24)]
    return MiniRAGRetriever.from_texts(texts, metadatas, ids=list(YEARS), embeddings=HashEmbedder(), k=4,
                                       index_kwargs={"extractor": NameListExtractor(), "query_mapper": NameMapper()})


@pytest.mark.parametrize("mode", ["naive", "light", "mini"])
def test_filter_field_and_per_call_filter(retriever, mode):
    recent = retriever.model_copy(update={"filter": {"year": {"$gte": 2021}}, "mode": mode})
    docs = recent.invoke(QUESTION)
    assert len(docs) == 4 and all(d.metadata["year"] >= 2021 for d in docs)
    german = recent.invoke(QUESTION, filter={"$and": [{"lang": "de"}, {"year": {"$in": [2016, 2018, 2022, 2023]}}]})
    assert len(german) == 4 and all(d.metadata["lang"] == "de" and d.metadata["year"] in (2016, 2018, 2022, 2023)
                                    for d in german)
    either = asyncio.run(recent.ainvoke(QUESTION, filter={"$or": [{"year": 2017}, {"year": {"$lt": 2017}}]}))
    assert len(either) == 4 and {d.metadata["year"] for d in either} <= {2016, 2017}


def test_fewer_pass_than_k_returns_every_passing_chunk(retriever):
    docs = retriever.invoke(QUESTION, k=10, filter={"year": 2023})
    assert sorted(d.metadata["doc_id"] for d in docs) == sorted(d for d, y in YEARS.items() if y == 2023)


def test_a_bad_filter_is_refused_with_the_reason(retriever):
    with pytest.raises(ValidationError, match="unknown filter operator 'like'"):
        MiniRAGRetriever(index=retriever.index, filter={"title": {"$like": "x"}})
    with pytest.raises(FilterError, match="needs a non-empty list"):
        retriever.invoke(QUESTION, filter={"lang": {"$in": []}})
