"""Namespaces: several indexes on one real Chroma server and one real FalkorDB server, isolated
(a query in one never sees another's chunks; a delete in one leaves the other untouched)."""

from __future__ import annotations

import json

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.manifest import IndexSettingsMismatch
from minirag_core.interfaces.cli import main
from minirag_core.types import Document

from servers import ChromaServer, FalkorDBServer, started_or_skipped
from stand_ins import HashEmbedder, NameListExtractor, NameMapper

MODES = ("mini", "light", "naive")
#: the same names in both namespaces, so a leak between them would rank the other's chunks first
ALPHA = [Document(id=f"alpha-{i}", text=f"Anna{i} met Boris{i} at the harbour. Boris{i} sells boats to Anna{i}.")
         for i in range(6)]
BETA = [Document(id=f"beta-{i}", text=f"Anna{i} met Boris{i} in the library. Boris{i} lends books to Anna{i}.")
        for i in range(4)]


@pytest.fixture(scope="module")
def chroma(tmp_path_factory):
    with started_or_skipped(ChromaServer, tmp_path_factory.mktemp("chroma-ns")) as server:
        yield server


@pytest.fixture(scope="module")
def falkordb(tmp_path_factory):
    with started_or_skipped(FalkorDBServer, tmp_path_factory.mktemp("falkordb-ns")) as server:
        yield server


def _open(namespace, chroma, falkordb, workdir=None) -> MiniRAGIndex:
    return MiniRAGIndex(workdir, embedder=HashEmbedder(), extractor=NameListExtractor(), query_mapper=NameMapper(),
                        chroma_url=chroma.url, falkordb_url=falkordb.url, namespace=namespace)


def _doc_ids(index: MiniRAGIndex, question: str, mode: str) -> set[str]:
    return {c.doc_id for c in index.query(question, mode=mode, top_k=5).chunks}


@pytest.mark.slow
def test_namespaces_on_one_server_are_isolated(chroma, falkordb):
    import chromadb
    from falkordb import FalkorDB

    alpha, beta = _open("alpha", chroma, falkordb), _open("beta", chroma, falkordb)
    alpha.insert(ALPHA)
    beta.insert(BETA)
    assert alpha.document_ids() == sorted(d.id for d in ALPHA) and beta.document_ids() == sorted(d.id for d in BETA)
    for mode in MODES:
        for i in range(4):  # each question names entities both namespaces hold
            question = f"What did Anna{i} and Boris{i} do?"
            found_alpha, found_beta = _doc_ids(alpha, question, mode), _doc_ids(beta, question, mode)
            assert found_alpha and all(d.startswith("alpha-") for d in found_alpha), (mode, found_alpha)
            assert found_beta and all(d.startswith("beta-") for d in found_beta), (mode, found_beta)
    collections = {c.name for c in chromadb.HttpClient(host="127.0.0.1", port=chroma.port).list_collections()}
    assert {"minirag-alpha_chunks", "minirag-beta_chunks"} <= collections
    host, port = falkordb.url.removeprefix("falkordb://").split(":")
    assert {"minirag-alpha", "minirag-beta"} <= set(FalkorDB(host=host, port=int(port)).list_graphs())

    hit = beta.query("What did Anna1 and Boris1 do?", mode="naive").chunks[0]  # citations on FalkorDB too
    assert {d.id: d.text for d in BETA}[hit.doc_id][hit.start_index:hit.end_index] == hit.text

    before = (beta.stats(), beta.vectors.store.count("chunks"), _doc_ids(beta, "Anna2 Boris2 books", "mini"))
    assert sorted(alpha.delete([d.id for d in ALPHA])) == sorted(d.id for d in ALPHA)
    assert alpha.stats()["chunks"] == 0 and alpha.vectors.store.count("chunks") == 0
    reopened = _open("beta", chroma, falkordb)  # the namespace is the index, wherever it is opened
    for index in (beta, reopened):
        assert (index.stats(), index.vectors.store.count("chunks"),
                _doc_ids(index, "Anna2 Boris2 books", "mini")) == before
    assert reopened.document_ids() == sorted(d.id for d in BETA)


@pytest.mark.slow
def test_cli_namespace_flag(tmp_path, chroma, falkordb, capsys):
    for name, docs in (("gamma", ALPHA[:2]), ("delta", BETA[:2])):
        folder = tmp_path / name
        folder.mkdir()
        for doc in docs:
            (folder / f"{doc.id}.txt").write_text(doc.text, encoding="utf-8")
        assert main(["index", str(folder), "--workdir", str(tmp_path / f"{name}.wd"), "--chroma-url", chroma.url,
                     "--falkordb-url", falkordb.url, "--namespace", name, "--quiet"]) == 0
    capsys.readouterr()
    for name, prefix in (("gamma", "alpha-"), ("delta", "beta-")):
        assert main(["query", "What did Anna0 and Boris0 do?", "--workdir", str(tmp_path / f"{name}.wd"),
                     "--chroma-url", chroma.url, "--falkordb-url", falkordb.url, "--namespace", name, "--json"]) == 0
        hits = json.loads(capsys.readouterr().out)["chunks"]
        assert hits and all(h["doc_id"].split("/")[-1].startswith(prefix) for h in hits)
    # a workdir reopened with another namespace is refused (one line), not silently emptied
    assert main(["query", "Anna0?", "--workdir", str(tmp_path / "gamma.wd"), "--chroma-url", chroma.url,
                 "--falkordb-url", falkordb.url, "--namespace", "delta"]) == 2
    assert "namespace" in capsys.readouterr().err


def test_a_workdir_keeps_its_namespace(tmp_path):
    kwargs = {"embedder": HashEmbedder(), "extractor": NameListExtractor(), "query_mapper": NameMapper()}
    MiniRAGIndex(tmp_path / "wd", namespace="one", **kwargs).insert(ALPHA[:1])
    for other in ("two", None):
        with pytest.raises(IndexSettingsMismatch, match="namespace"):
            MiniRAGIndex(tmp_path / "wd", namespace=other, **kwargs)
    assert MiniRAGIndex(tmp_path / "wd", namespace="one", **kwargs).document_ids() == ["alpha-0"]


def test_bad_namespaces_are_refused(tmp_path):
    kwargs = {"embedder": HashEmbedder(), "extractor": NameListExtractor(), "query_mapper": NameMapper()}
    for bad in ("", "a b", "-lead", "x" * 41, "ns/graph"):
        with pytest.raises(ValueError, match="namespace"):
            MiniRAGIndex(tmp_path / "bad", namespace=bad, **kwargs)
    with pytest.raises(ValueError, match="needs the graph on a server"):  # an in-memory graph cannot be shared
        MiniRAGIndex(None, namespace="alone", **kwargs)
    assert not (tmp_path / "bad").exists()  # refused before anything is written


@pytest.mark.slow
def test_adapters_take_a_namespace(chroma, falkordb):
    from langchain_core.documents import Document as LCDocument

    from langchain_minirag.retrievers import MiniRAGRetriever
    from llama_index_minirag.graph_stores import falkordb_store

    models = {"extractor": NameListExtractor(), "query_mapper": NameMapper(), "chroma_url": chroma.url,
              "falkordb_url": falkordb.url}
    retrievers = {name: MiniRAGRetriever.from_documents(
        [LCDocument(page_content=d.text, id=d.id) for d in docs], embeddings=HashEmbedder(), namespace=name,
        index_kwargs=models, k=3) for name, docs in (("lc-one", ALPHA), ("lc-two", BETA))}
    for name, prefix in (("lc-one", "alpha-"), ("lc-two", "beta-")):
        assert retrievers[name].index.namespace == name
        found = retrievers[name].invoke("What did Anna1 and Boris1 do?")
        assert len(found) == 3 and all(d.metadata["document_id"].startswith(prefix) for d in found)
    store = falkordb_store(falkordb.url, namespace="li-one")
    assert store._database == store._graph.name == "minirag-li-one"
    with pytest.raises(ValueError, match="give one of them"):
        falkordb_store(falkordb.url + "/other", namespace="li-one")
