"""The marker that lets a new process skip reconciling vectors with the graph on open."""

from __future__ import annotations

import json

import pytest

from minirag_core.indexing import index as index_module
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.vector_sync import STATE_FILE
from minirag_core.search.vectors import CHUNKS, ENTITIES

from conftest import lihuaworld_documents


def _recorder(calls: list[dict]):
    real = index_module.repair_vectors

    def counting(*args, **kwargs):
        fixed = real(*args, **kwargs)
        calls.append(fixed)
        return fixed

    return counting


@pytest.fixture
def counted_repairs(monkeypatch):
    calls: list[dict] = []
    monkeypatch.setattr(index_module, "repair_vectors", _recorder(calls))
    return calls


def _built(tmp_path, embedder, graph_backend: str | None = None) -> MiniRAGIndex:
    index = MiniRAGIndex(tmp_path / "w", embedder=embedder, graph_backend=graph_backend)
    index.insert(lihuaworld_documents(3))
    return index


def test_a_clean_workdir_reopens_without_reconciling(tmp_path, embedder, counted_repairs):
    index = _built(tmp_path, embedder)
    state = json.loads((tmp_path / "w" / STATE_FILE).read_text())
    assert state["clean"] is True and state["counts"][CHUNKS] == len(index.graph_store.chunk_ids())
    counted_repairs.clear()
    reopened = MiniRAGIndex(tmp_path / "w", embedder=embedder)
    assert counted_repairs == []
    assert reopened.query("What did Li Hua do?").chunks


@pytest.mark.parametrize("graph_backend", ["networkx", "sqlite"])
def test_a_write_that_did_not_end_is_reconciled_on_open(tmp_path, embedder, counted_repairs, monkeypatch,
                                                         graph_backend):
    index = _built(tmp_path, embedder, graph_backend)

    def crash(*args, **kwargs):  # the vectors are written, the graph never follows
        raise RuntimeError("killed between the vector write and the graph write")

    monkeypatch.setattr(index.graph_store, "save", crash)
    with pytest.raises(RuntimeError):
        index.insert(lihuaworld_documents(5)[3:])
    assert json.loads((tmp_path / "w" / STATE_FILE).read_text()) == {"clean": False}
    counted_repairs.clear()
    reopened = MiniRAGIndex(tmp_path / "w", embedder=embedder)
    assert counted_repairs and counted_repairs[-1][f"{CHUNKS}_removed"] > 0
    assert reopened.vectors.store.ids(CHUNKS) == set(reopened.graph_store.chunk_ids())
    assert json.loads((tmp_path / "w" / STATE_FILE).read_text())["clean"] is True


def test_vectors_changed_under_the_workdir_are_reconciled_on_open(tmp_path, embedder, counted_repairs):
    index = _built(tmp_path, embedder)
    entity = sorted(index.graph_store.entity_ids())[0]
    index.vectors.store.delete(ENTITIES, [entity])  # behind the index's back: the counts differ
    counted_repairs.clear()
    reopened = MiniRAGIndex(tmp_path / "w", embedder=embedder)
    assert counted_repairs and counted_repairs[-1][f"{ENTITIES}_added"] == 1
    assert entity in reopened.vectors.store.ids(ENTITIES)


@pytest.mark.parametrize("graph_backend", ["networkx", "sqlite"])
def test_the_next_write_in_the_same_process_reconciles_first(tmp_path, embedder, counted_repairs, monkeypatch,
                                                              graph_backend):
    index = _built(tmp_path, embedder, graph_backend)
    real_save = index.graph_store.save

    def crash(*args, **kwargs):
        raise RuntimeError("the graph write failed")

    monkeypatch.setattr(index.graph_store, "save", crash)
    with pytest.raises(RuntimeError):
        index.insert(lihuaworld_documents(5)[3:4])
    monkeypatch.setattr(index.graph_store, "save", real_save)
    counted_repairs.clear()
    index.insert(lihuaworld_documents(5)[4:5])  # checks first: it must not mark clean over the failed write
    assert counted_repairs
    assert index.vectors.store.ids(CHUNKS) == set(index.graph_store.chunk_ids())
    assert json.loads((tmp_path / "w" / STATE_FILE).read_text())["clean"] is True
