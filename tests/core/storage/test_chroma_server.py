"""The index against a real Chroma server (``chroma run`` on 127.0.0.1), configured by URL."""

from __future__ import annotations

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.search.vectors import CHUNKS, ENTITIES, RELATIONS, WINDOWS, window_owner

from conftest import lihuaworld_documents
from servers import ChromaServer, chroma_executable, started

pytestmark = pytest.mark.slow

QUESTIONS = ["What did Li Hua and Wolfgang talk about?", "Who delivered the bread?", "Where did Li Hua travel?"]
MODES = ("mini", "light", "naive")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if chroma_executable() is None:
        pytest.skip("the chroma executable is not installed")
    with started(ChromaServer, tmp_path_factory.mktemp("chroma-server")) as srv:
        yield srv


def _results(index: MiniRAGIndex) -> dict:
    return {(q, m): index.query(q, mode=m).to_json() for q in QUESTIONS for m in MODES}


def _assert_vectors_match_graph(index: MiniRAGIndex) -> None:
    graph, store = index.graph_store, index.vectors.store
    expected = index.expected_vector_ids()
    assert expected[CHUNKS] == set(graph.chunk_ids()) and expected[ENTITIES] == set(graph.entity_ids())
    for collection in (CHUNKS, ENTITIES, RELATIONS):  # relation vectors: none until light mode needs them
        assert store.ids(collection) == expected.get(collection, set()), collection


def test_index_on_a_chroma_server_survives_reopen_and_server_restart(tmp_path, embedder, server):
    import chromadb

    docs = lihuaworld_documents(weeks=("week1",))[:10]
    workdir = tmp_path / "wd"
    index = MiniRAGIndex(workdir, embedder=embedder, chroma_url=server.url)
    report = index.insert(docs)
    assert len(report.inserted) == len(docs)
    assert not (workdir / "chroma").exists(), "vectors must live on the server, not in the workdir"
    assert (workdir / "chroma_server.json").exists()  # this workdir's own collection names there
    _assert_vectors_match_graph(index)
    before = _results(index)
    assert all('"chunks": []' not in r for r in before.values())

    # the server really holds them (seen through a separate HttpClient)
    client = chromadb.HttpClient(host="127.0.0.1", port=server.port)
    counts = {c.name: c.count() for c in client.list_collections()}
    windows = sum(n for name, n in counts.items() if name.endswith("_" + WINDOWS))  # a long chunk's later windows
    assert windows == len(index.vectors.window_ids())
    assert {window_owner(w) for w in index.vectors.window_ids()} <= index.expected_vector_ids()[CHUNKS]
    assert sum(counts.values()) - windows == sum(len(ids) for ids in index.expected_vector_ids().values())

    # reopen the workdir: same vectors, nothing to repair, same results
    reopened = MiniRAGIndex(workdir, embedder=embedder, chroma_url=server.url)
    assert not any(reopened.repair().values())
    assert _results(reopened) == before

    # restart the server on the same data: still the same
    server.stop()
    server.start()
    after_restart = MiniRAGIndex(workdir, embedder=embedder, chroma_url=server.url)
    assert not any(after_restart.repair().values())
    assert _results(after_restart) == before

    # deletes go to the server too
    after_restart.delete(docs[0].id)
    _assert_vectors_match_graph(after_restart)


def test_two_workdirs_can_share_one_server(tmp_path, embedder, server):
    docs = lihuaworld_documents(weeks=("week2",))
    a = MiniRAGIndex(tmp_path / "a", embedder=embedder, chroma_url=server.url)
    a.insert(docs[:3])
    b = MiniRAGIndex(tmp_path / "b", embedder=embedder, chroma_url=server.url)
    b.insert(docs[3:6])
    # opening (and repairing) one must not delete the other's vectors
    a = MiniRAGIndex(tmp_path / "a", embedder=embedder, chroma_url=server.url)
    assert not any(a.repair().values())
    _assert_vectors_match_graph(a)
    _assert_vectors_match_graph(b)
    assert {c.doc_id for c in a.query("What happened?", mode="naive").chunks} <= {d.id for d in docs[:3]}
