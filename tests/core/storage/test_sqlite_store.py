"""The graph in a SQLite file: the ``GraphStore`` protocol, the same graph and retrieval as the
networkx store (aliases included), deletes, reopening, and a save that fails midway."""

from __future__ import annotations

import shutil

import networkx as nx
import pytest

from graph_parity import assert_same_expansion, corpus_of_passages, retrieval_state
from minirag_core.graph.heterogeneous import add_entity_record, add_relation_record
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.storage.base import Change, GraphStore
from minirag_core.storage.graph_stores import GraphStoreMismatch
from minirag_core.storage.sqlite_store import SQLiteGraphStore
from minirag_core.storage.graph_stores import whole_graph
from index_state import _graph_state

MODES = ("mini", "light", "naive")


@pytest.fixture(scope="module")
def corpus():
    return corpus_of_passages()


def _copy_extractions(source, target) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in ("extractions.jsonl", "type_vectors.npz"):  # the same extractions, made once
        if (source / name).exists():
            shutil.copy(source / name, target / name)


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder, corpus):
    """The same corpus indexed with the networkx store and the SQLite store."""
    docs, _ = corpus
    root = tmp_path_factory.mktemp("sqlite-parity")
    local = MiniRAGIndex(root / "local", embedder=embedder)
    local.insert(docs)
    _copy_extractions(root / "local", root / "file")
    stored = MiniRAGIndex(root / "file", embedder=embedder, graph_backend="sqlite")
    stored.insert(docs)
    return local, stored


def test_the_file_holds_the_same_graph_as_the_networkx_store(built) -> None:
    local, stored = built
    assert isinstance(stored.graph_store, SQLiteGraphStore) and isinstance(stored.graph_store, GraphStore)
    assert (stored.workdir / "graph.sqlite").exists() and not (stored.workdir / "graph.json").exists()
    assert stored.graph_store.stats()["chunks"] == 20 and stored.graph_store.stats()["relations"] > 0
    assert stored.graph_store.count_chunks() == local.graph_store.count_chunks() == 20
    assert _graph_state(stored) == _graph_state(local)  # every node, edge and attribute
    assert retrieval_state(stored) == retrieval_state(local)


def test_inserts_and_deletes_give_the_graph_of_a_one_shot_build(built, embedder, corpus, tmp_path) -> None:
    local, _ = built
    docs, _ = corpus
    _copy_extractions(local.workdir, tmp_path / "steps")
    stored = MiniRAGIndex(tmp_path / "steps", embedder=embedder, graph_backend="sqlite")
    stored.insert(docs[:12])
    stored.delete([docs[0].id, docs[5].id])
    stored.insert([docs[0], docs[5], *docs[12:]])
    assert _graph_state(stored) == _graph_state(local)
    stored.delete([d.id for d in docs])
    assert stored.graph_store.stats() == {"chunks": 0, "entities": 0, "relations": 0, "mentions": 0}


def test_chunk_links_held_in_memory_answer_as_the_table_does(built, tmp_path) -> None:
    """``entity_chunk_ids`` reads the in-memory links: the networkx store's and the table's
    answer for every entity, a chunk id and an unknown id; a write is seen at once, and the
    links are built without the relation arrays."""
    local, stored = built
    store = stored.graph_store
    asked = [*store.entity_ids(), store.chunk_ids()[0], "no such id"]
    assert store.entity_chunk_ids(asked) == local.graph_store.entity_chunk_ids(asked)
    assert store.entity_chunk_ids(asked) == store._mention_lists(asked, "entity", "chunk")
    assert len(store._links[False].indices) == store.stats()["mentions"]
    # the chunks about each entity (bridges, light mode): from in-memory links too
    table: dict[str, list[str]] = {}
    for entity, chunk in store._rows("SELECT entity, chunk FROM mentions WHERE subject = 1 ORDER BY entity, chunk"):
        table.setdefault(entity, []).append(chunk)
    assert table and store.subject_chunks(asked) == local.graph_store.subject_chunks(asked) == {
        e: table[e] for e in asked if e in table}
    fresh = SQLiteGraphStore(tmp_path / "g.sqlite")
    _one_chunk(fresh)
    fresh.save()
    assert fresh.entity_chunk_ids(["A", "C"]) == {"A": ["c1"]}
    assert fresh.subject_chunks(["C", "A", "B", "A"]) == {"A": ["c1"]}
    assert fresh._arrays is None  # the links alone: light mode never builds the relation arrays
    g = fresh.working_graph(["c1"], ["A"])
    g.add_node("c2", kind="chunk", doc_id="d", order=1, text="A and C.", n_tokens=3, relations=[], subjects=["C"])
    for e in ("A", "C"):
        add_entity_record(g, e, "c2", {"name": e, "type": "PERSON", "description": f"{e} in c2"})
        g.add_edge(e, "c2", kind="mention", description=f"{e} in c2")
    fresh.save(Change(["c2", "A", "C"], [("A", "c2"), ("C", "c2")], {"documents": []}))
    assert fresh.entity_chunk_ids(["A", "C"]) == {"A": ["c1", "c2"], "C": ["c2"]}
    assert fresh.subject_chunks(["A", "C"]) == {"A": ["c1"], "C": ["c2"]}


def test_k_hop_expansion_matches_the_networkx_store(built) -> None:
    assert_same_expansion(*built)


def test_same_retrieval_on_both_stores(built, corpus) -> None:
    local, stored = built
    _, questions = corpus
    for question in questions:
        for mode in MODES:
            ours, theirs = local.query(question, mode=mode), stored.query(question, mode=mode)
            assert ours.chunks, (question, mode)
            assert theirs.to_json() == ours.to_json(), (question, mode)
        ours, theirs = (i.query(question, residual_weight=2.0) for i in (local, stored))  # the opt-in round
        assert ours.chunks and theirs.to_json() == ours.to_json(), question


def test_reopening_reads_the_file(built, embedder, corpus) -> None:
    _, stored = built
    _, questions = corpus
    reopened = MiniRAGIndex(stored.workdir, embedder=embedder)  # the workdir knows its store
    assert isinstance(reopened.graph_store, SQLiteGraphStore)
    assert not any(reopened.repair().values())
    assert reopened.document_ids() == stored.document_ids()
    assert reopened.query(questions[0]).to_json() == stored.query(questions[0]).to_json()
    with pytest.raises(GraphStoreMismatch, match="graph.sqlite"):
        MiniRAGIndex(stored.workdir, embedder=embedder, graph_backend="networkx")
    with pytest.raises(GraphStoreMismatch, match="graph.sqlite"):
        MiniRAGIndex(stored.workdir, embedder=embedder, falkordb_url="falkordb://127.0.0.1:1")
    with pytest.raises(ValueError, match="graph backend"):
        MiniRAGIndex(stored.workdir.parent / "new", embedder=embedder, graph_backend="parquet")


def test_another_process_sees_a_write(tmp_path) -> None:
    first, second = SQLiteGraphStore(tmp_path / "g.sqlite"), SQLiteGraphStore(tmp_path / "g.sqlite")
    g = first.working_graph(["c1"])
    g.add_node("c1", kind="chunk", doc_id="d", order=0, text="A.", n_tokens=1, relations=[], subjects=[])
    first.documents()["d"] = {"hash": "h", "chunks": ["c1"], "metadata": {}}
    first.save(Change(["c1"], [], {"documents": ["d"]}))
    assert second.documents() == {}
    assert second.reload_if_changed() and second.documents() == first.documents()
    assert not second.reload_if_changed() and second.chunk_ids() == ["c1"]


def _one_chunk(store: SQLiteGraphStore) -> None:
    g = store.working_graph(["c1"], ["A", "B"])
    g.add_node("c1", kind="chunk", doc_id="d", order=0, text="A met B.", n_tokens=3,
               relations=[["A", "B"]], subjects=["A"])
    for e in ("A", "B"):
        add_entity_record(g, e, "c1", {"name": e, "type": "PERSON", "description": f"{e} in c1"})
        g.add_edge(e, "c1", kind="mention", description=f"{e} in c1")
    add_relation_record(g, ("A", "B"), "c1", {"weight": 2.0, "description": "met", "keywords": "meeting"})
    store.documents()["d"] = {"hash": "h", "chunks": ["c1"], "metadata": {"k": 1}}


def test_working_graph_and_save_round_trip(tmp_path) -> None:
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    _one_chunk(store)
    written = store._work.copy()
    store.save(Change(["c1", "A", "B"], [("A", "B")], {"documents": ["d"]}))
    again = store.working_graph(["c1"])
    assert nx.utils.nodes_equal(again.nodes(data=True), written.nodes(data=True))
    assert nx.utils.edges_equal(again.edges(data=True), written.edges(data=True))
    assert store.entity("A") == {"name": "A", "type": "PERSON", "description": "A in c1", "source_chunks": ["c1"]}
    assert store.entity("c1") is None
    assert store.chunk_links(["A", "X"]) == {"A": {"c1": "A in c1"}}
    assert store.entity_chunk_ids(["A", "X"]) == {"A": ["c1"]}
    assert store.chunk_entities(["c1"]) == {"c1": ["A", "B"]}
    assert store.subject_chunks(["A", "B"]) == {"A": ["c1"]}
    assert store.relation_keywords() == {("A", "B"): "meeting"}
    g = store.working_graph(["c1"])  # removing the chunk node removes its mentions
    g.remove_node("c1")
    g.remove_edge("A", "B")
    store.save(Change(["c1"], [("B", "A")], {"documents": []}))
    assert store.stats() == {"chunks": 0, "entities": 2, "relations": 0, "mentions": 0}


def test_a_save_that_fails_midway_leaves_the_file_unchanged(tmp_path, monkeypatch) -> None:
    """Nodes are written before edges; a failure between them (as a crash would) keeps neither."""
    store = SQLiteGraphStore(tmp_path / "g.sqlite")
    _one_chunk(store)

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed mid-save")

    monkeypatch.setattr(SQLiteGraphStore, "_write_edges", crash)
    with pytest.raises(KeyboardInterrupt):
        store.save(Change(["c1", "A", "B"], [("A", "B")], {"documents": ["d"]}))
    fresh = SQLiteGraphStore(tmp_path / "g.sqlite")
    assert fresh.stats() == {"chunks": 0, "entities": 0, "relations": 0, "mentions": 0}
    assert fresh.documents() == {}
    monkeypatch.undo()
    _one_chunk(store)
    store.save(Change(["c1", "A", "B"], [("A", "B")], {"documents": ["d"]}))
    assert fresh.reload_if_changed() and fresh.documents() == {"d": store.documents()["d"]}
    assert fresh.stats() == {"chunks": 1, "entities": 2, "relations": 1, "mentions": 2}
    assert whole_graph(fresh).number_of_edges() == 3


def test_a_file_in_the_earlier_layout_is_refused_with_a_clear_error(tmp_path) -> None:
    """Format 1 kept each entity's records inside its JSON; read as format 2 they would look missing."""
    import sqlite3

    path = tmp_path / "graph.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE nodes (id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT, type TEXT, "
               "surname TEXT, attrs TEXT NOT NULL)")
    db.execute("INSERT INTO nodes VALUES ('A', 'entity', 'A', 'PERSON', NULL, '{\"sources\": {}}')")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="earlier layout.*rebuild"):
        SQLiteGraphStore(path)
    assert SQLiteGraphStore(tmp_path / "new.sqlite").stats()["entities"] == 0  # a new file is format 2


def test_link_arrays_hold_the_same_links_as_the_networkx_store(built) -> None:
    """Mini mode's per-chunk work reads either store's link arrays: the same rows, chunks and order."""
    import numpy as np

    local, stored = built
    for subjects in (False, True):
        mine, theirs = local.graph_store.link_arrays(subjects), stored.graph_store.link_arrays(subjects)
        assert mine.chunk_ids == theirs.chunk_ids and mine.entity_ids == theirs.entity_ids
        assert np.array_equal(mine.indptr, theirs.indptr) and np.array_equal(mine.indices, theirs.indices)
        assert [a.tolist() for a in mine.by_chunk()] == [a.tolist() for a in theirs.by_chunk()]
    assert int(local.graph_store.link_arrays().counts.sum()) > 0
