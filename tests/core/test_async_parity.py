"""Async parity: every async twin of the core index and of both adapters leaves the event loop
free while its slow work runs. The probe: a ticker coroutine that wakes every 5 ms runs beside the
twin while a blocking step (an embedder or a graph store that sleeps, as a slow model or server
would) takes ``DELAY`` seconds; the largest gap between two ticks must stay well under ``DELAY``.
A control shows the probe catches a call that blocks."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable

import pytest

from minirag_core.indexing import index as index_module, index_reads
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document

from stand_ins import HashEmbedder, NameListExtractor, NameMapper

DELAY = 0.8
#: the longest the loop may go without a tick while a twin runs: a blocked loop misses DELAY; the
#: margin below it is for a machine whose cores are busy elsewhere
MAX_GAP = 0.5
DOCS = [Document(id=f"d{i}", text=f"Anna{i} met Boris{i} at the harbour. Boris{i} sells boats to Anna{i}.")
        for i in range(6)]
QUESTION = "What did Anna1 and Boris1 do?"


class Slowness:
    """Whether the slow steps block now (``slow``) and how often they did (``slept``)."""

    def __init__(self) -> None:
        self.slow, self.slept = False, 0


class SlowEmbedder(HashEmbedder, Slowness):
    """Embeds like ``HashEmbedder``; while ``slow`` is set each call blocks its thread for ``DELAY``."""

    def embed(self, texts):
        if self.slow:
            time.sleep(DELAY)
            self.slept += 1
        return super().embed(texts)


def _slowed(function: Callable[..., Any], clock: Slowness) -> Callable[..., Any]:
    """``function``, first blocking ``DELAY`` seconds while ``clock.slow`` is set (a slow disk, server
    or model load), counted in ``clock.slept``."""
    def slow(*args: Any, **kwargs: Any) -> Any:
        if clock.slow:
            time.sleep(DELAY)
            clock.slept += 1
        return function(*args, **kwargs)

    return slow


def _index(embedder: SlowEmbedder, workdir: Any = None) -> MiniRAGIndex:
    return MiniRAGIndex(workdir, embedder=embedder, extractor=NameListExtractor(), query_mapper=NameMapper(),
                        workers=1)


def _probe(work: Callable[[], Awaitable[Any]]) -> tuple[Any, float]:
    """Run ``work()`` beside a ticker; its result and the longest gap between two ticks."""
    async def main() -> tuple[Any, float]:
        gaps: list[float] = []
        done = asyncio.Event()

        async def tick() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.02)  # the ticker runs before the twin starts
        try:
            result = await work()
        finally:
            done.set()
            await ticker
        return result, max(gaps)

    return asyncio.run(main())


def _assert_free(embedder: Slowness, work: Callable[[], Awaitable[Any]]) -> Any:
    embedder.slow, embedder.slept = True, 0
    try:
        result, gap = _probe(work)
    finally:
        embedder.slow = False
    assert embedder.slept, "the slow step never ran: the probe measured nothing"
    assert gap < MAX_GAP, f"the event loop stalled {gap:.2f} s"
    return result


@pytest.fixture()
def slow():
    return SlowEmbedder()


@pytest.fixture()
def built(slow):
    index = _index(slow)
    index.insert(DOCS)
    return index


def test_the_probe_catches_a_blocking_call(slow, built):
    async def blocking() -> Any:
        return built.query(QUESTION, mode="naive")

    slow.slow = True
    _, gap = _probe(blocking)
    assert slow.slept and gap >= DELAY * 0.9


@pytest.mark.parametrize("mode", ["mini", "naive"])
def test_core_index_twins(slow, built, mode, tmp_path):
    result = _assert_free(slow, lambda: built.aquery(QUESTION, mode=mode))
    assert result.chunks and result.chunks[0].doc_id == "d1"
    answer = _assert_free(slow, lambda: built.aanswer(QUESTION, mode=mode))
    assert "Anna1" in answer.text
    if mode == "naive":
        report = _assert_free(slow, lambda: built.ainsert([Document(id="new", text="Carla7 paints boats.")]))
        assert report.inserted == ["new"]


def test_core_index_delete_and_export_twins(built, monkeypatch, tmp_path):
    slow_store = Slowness()  # the store's save, then reading the whole graph, is what blocks here
    monkeypatch.setattr(built.graph_store, "save", _slowed(built.graph_store.save, slow_store))
    assert _assert_free(slow_store, lambda: built.adelete(["d0"])) == ["d0"]
    assert "d0" not in built.document_ids()
    monkeypatch.setattr(index_reads, "whole_graph", _slowed(index_reads.whole_graph, slow_store))
    path = _assert_free(slow_store, lambda: built.aexport_graph(tmp_path / "g.graphml"))
    assert path.exists()


def test_langchain_twins(slow, tmp_path, monkeypatch):
    from langchain_core.documents import Document as LCDocument

    from langchain_minirag.retrievers import MiniRAGRetriever

    kwargs = {"embeddings": slow, "index_kwargs": {"extractor": NameListExtractor(), "query_mapper": NameMapper(),
                                                   "workers": 1}, "k": 3}
    documents = [LCDocument(page_content=d.text, id=d.id) for d in DOCS]
    retriever = _assert_free(slow, lambda: MiniRAGRetriever.afrom_documents(
        documents, persist_directory=tmp_path / "wd", **kwargs))
    assert retriever.index.document_ids() == sorted(d.id for d in DOCS)
    for mode in ("mini", "light", "naive"):
        found = _assert_free(slow, lambda: retriever.ainvoke(QUESTION, mode=mode))
        assert len(found) == 3 and found[0].metadata["document_id"] == "d1"
    ids = _assert_free(slow, lambda: retriever.aadd_documents([LCDocument(page_content="Carla7 paints boats.")]))
    assert len(ids) == 1 and ids[0] in retriever.index.document_ids()
    texts = _assert_free(slow, lambda: MiniRAGRetriever.afrom_texts(["Dora3 rows boats."], ids=["t"], **kwargs))
    assert texts.index.document_ids() == ["t"]

    open_graph_store = index_module.open_graph_store  # slow to open: a slow disk or server
    monkeypatch.setattr(index_module, "open_graph_store", _slowed(open_graph_store, slow))
    reopened = _assert_free(slow, lambda: MiniRAGRetriever.afrom_persist_directory(
        tmp_path / "wd", embeddings=slow, index_kwargs=kwargs["index_kwargs"]))
    assert len(reopened.index.document_ids()) == len(DOCS) + 1
    monkeypatch.setattr(index_module, "open_graph_store", open_graph_store)

    monkeypatch.setattr(retriever.index.graph_store, "save", _slowed(retriever.index.graph_store.save, slow))
    assert _assert_free(slow, lambda: retriever.adelete(["d2"])) == ["d2"]


def test_llama_index_twins_over_a_core_index(slow, built):
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from llama_index_minirag.retriever import MiniRAGRetriever

    retriever = MiniRAGRetriever.from_index(built, top_k=3)
    nodes = _assert_free(slow, lambda: retriever.aretrieve(QUESTION))
    assert len(nodes) == 3 and nodes[0].node.metadata["minirag_doc_id"] == "d1"
    result = _assert_free(slow, lambda: retriever.aretrieve_result(QUESTION))
    assert result.chunks[0].doc_id == "d1"
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = _assert_free(slow, lambda: engine.aquery(QUESTION))
    assert response.source_nodes and response.source_nodes[0].node.metadata["minirag_doc_id"] == "d1"


def test_llama_index_twins_over_a_property_graph(slow, monkeypatch):
    from llama_index.core import Document as LlamaDocument, PropertyGraphIndex
    from llama_index.core.llms import MockLLM

    from llama_index_minirag import MiniLMEmbedding, MiniRAGExtractor, MiniRAGPGRetriever, MiniRAGRetriever

    embed_model = MiniLMEmbedding(slow)
    docs = [LlamaDocument(text=d.text, id_=d.id) for d in DOCS]
    extractor = MiniRAGExtractor(embed_model=embed_model, extractor=NameListExtractor())
    graph = PropertyGraphIndex.from_documents(docs, kg_extractors=[extractor], embed_model=embed_model, llm=MockLLM(),
                                              use_async=False, embed_kg_nodes=False)
    from llama_index_minirag import graph_sources

    with monkeypatch.context() as patch:
        patch.setattr(graph_sources, "as_core_embedder", _slowed(graph_sources.as_core_embedder, slow))  # model load
        retriever = _assert_free(slow, lambda: MiniRAGRetriever.afrom_property_graph(
            graph, embed_model=slow, query_mapper=NameMapper(), top_k=3))
    nodes = _assert_free(slow, lambda: retriever.aretrieve(QUESTION))
    assert len(nodes) == 3 and "Anna1" in nodes[0].node.get_content()
    sub = MiniRAGPGRetriever(graph.property_graph_store, embed_model=slow, query_mapper=NameMapper(), top_k=3)
    nodes = _assert_free(slow, lambda: sub.acustom_retrieve(QUESTION))
    assert len(nodes) == 3 and "Anna1" in nodes[0].node.get_content()
    from llama_index.core.node_parser import SentenceSplitter

    pieces = SentenceSplitter().get_nodes_from_documents([LlamaDocument(text="Carla7 met Dora7.", id_="late")])
    extracted = _assert_free(slow, lambda: extractor.acall(pieces))
    assert extracted[0].metadata
