"""A PropertyGraphIndex built with MiniRAGExtractor has MiniRAG's graph vectors ready: the first
retrieval embeds the question and its entity spans, never a graph text (entity name, chunk
window, relation text), so it costs what a later query does."""

from __future__ import annotations

import re
from typing import Any

import pytest
from llama_index.core import Document, PropertyGraphIndex
from llama_index.core.llms import MockLLM

from llama_index_minirag import MiniLMEmbedding, MiniRAGExtractor, MiniRAGRetriever, MiniRAGTokenSplitter
from minirag_core.retrieval.memory_sources import vector_texts
from minirag_core.types import ExtractedEntity, ExtractedRelation, ExtractionResult, QueryMapping

from conftest import LIHUAWORLD

SPAN = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")


class CountingEmbedder:
    """A core embedder that records every text it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.embedded: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts):
        self.embedded.extend(texts)
        return self.inner.embed(texts)


class SpanMapper:
    """Query mapping without a model: the question's capitalised spans (embeds nothing)."""

    def map_query(self, query: str, type_pool: Any) -> QueryMapping:
        return QueryMapping(entities=SPAN.findall(query), answer_types=["PERSON", "LOCATION"], source="offline")

    async def amap_query(self, query: str, type_pool: Any) -> QueryMapping:
        return self.map_query(query, type_pool)


class ScriptedExtractor:
    """Stated relations that several chunks describe (their texts merge) and a short name
    ("Lovelace") that consolidation homes at a full name another chunk gives."""

    name = "scripted:v1"

    def extract(self, chunks, *, show_progress=False):
        results = []
        for chunk in chunks:
            people = [p for p in ("Ada Lovelace", "Lovelace", "Charles Babbage", "Mary Somerville") if p in chunk.text]
            people = [p for p in people if not any(p != q and q.endswith(p) for q in people)]
            relations = [ExtractedRelation(a, b, f"{a} wrote to {b} in {chunk.id[:6]}", "correspondence, engine")
                         for a, b in zip(people, people[1:])]
            results.append(ExtractionResult(
                entities=[ExtractedEntity(p, "PERSON", f"{p} in {chunk.id[:6]}") for p in people],
                relations=relations, subject_entities=people[:1]))
        return results

    async def aextract(self, chunks, *, show_progress=False):
        return self.extract(chunks)


SCRIPTED_DOCS = [
    "Ada Lovelace wrote to Charles Babbage about the engine. The notes ran long.",
    "Lovelace answered Charles Babbage again; Mary Somerville had introduced them.",
    "Mary Somerville and Charles Babbage met at a dinner in London.",
    "Ada Lovelace translated a paper on the engine for Charles Babbage.",
]


def _lihuaworld_docs(limit: int = 4) -> list[Document]:
    files = sorted((LIHUAWORLD / "corpus" / "week1").glob("*.txt"))[:limit]
    if len(files) < limit:
        pytest.skip("LiHuaWorld corpus not available")
    return [Document(text=f.read_text(encoding="utf-8"), id_=f.stem) for f in files]


@pytest.mark.parametrize("case", ["offline", "scripted"])
def test_first_retrieval_embeds_no_graph_text(case, embedder, tmp_path):
    counting = CountingEmbedder(embedder)
    if case == "offline":
        docs, question = _lihuaworld_docs(), "Where did Li Hua and Wolfgang have lunch?"
        extractor = MiniRAGExtractor(embed_model=counting)
    else:
        docs = [Document(text=t, id_=f"letter{i}") for i, t in enumerate(SCRIPTED_DOCS)]
        question = "What did Ada Lovelace write to Charles Babbage?"
        extractor = MiniRAGExtractor(extractor=ScriptedExtractor(), embed_model=counting)
    index = PropertyGraphIndex.from_documents(docs, kg_extractors=[extractor],
                                              transformations=[MiniRAGTokenSplitter(embed_model=counting)],
                                              embed_model=MiniLMEmbedding(embedder), llm=MockLLM(),
                                              embed_kg_nodes=False, use_async=False)
    retriever = MiniRAGRetriever.from_property_graph(index.property_graph_store, embed_model=counting,
                                                     query_mapper=SpanMapper(), top_k=3)
    counting.embedded.clear()
    assert retriever.retrieve(question)
    g = retriever.sources.snapshot().graph.graph
    graph_texts = set(vector_texts(g, counting))
    relation_texts = {t for t in graph_texts if " wrote to " in t}
    if case == "scripted":  # merged relation texts and the consolidated name are covered too
        assert relation_texts and any(t.count(" wrote to ") > 1 for t in relation_texts)
        assert "Lovelace" not in {a.get("name") for _, a in g.nodes(data=True)}
    assert len(graph_texts) > 5
    allowed = {question, *SPAN.findall(question)}
    assert set(counting.embedded) <= allowed, set(counting.embedded) - allowed
