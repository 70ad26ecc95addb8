"""A Ladybug graph and MiniRAG's records file beside it hold the same chunks whatever fails
between the two writes: a records write that fails undoes the database's new chunks, and a
process that stopped between the two writes leaves a note the next open repairs from. The
store is used through the exact versions ``pyproject.toml`` pins."""

from __future__ import annotations

import re
import sqlite3
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("ladybug")
pytest.importorskip("llama_index.graph_stores.ladybug")

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation

from llama_index_minirag import MENTIONED_IN, close_store, ladybug_store
from llama_index_minirag.ladybug_access import LadybugAccess
from llama_index_minirag.store_watch import watched_access

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _write_chunk(store, chunk_id: str, entity: str) -> None:
    store.upsert_nodes([ChunkNode(id_=chunk_id, text=f"{entity} wrote {chunk_id}", properties={"ref_doc_id": "d"}),
                        EntityNode(name=entity, label="PERSON", properties={"entity_id": entity.upper()})])
    store.upsert_relations([Relation(label=MENTIONED_IN, source_id=entity, target_id=chunk_id,
                                     properties={"entity_name": entity, "entity_type": "PERSON", "position": 0})])


def _database_chunks(store) -> set[str]:
    return {row[0] for row in store.connection.execute("MATCH (c:Chunk) RETURN c.id")}


def _recorded_chunks(access: LadybugAccess) -> set[str]:
    return {row[0] for row in access._rows("SELECT id FROM chunks")}


def test_failed_records_write_undoes_the_database_write(tmp_path, monkeypatch):
    store = ladybug_store(str(tmp_path / "graph.lbdb"))
    access = watched_access(store)
    _write_chunk(store, "c1", "Ada")
    record = LadybugAccess._record

    def failing(self, name, items, args, kwargs):
        if name == "upsert_nodes":
            raise sqlite3.OperationalError("disk I/O error")
        return record(self, name, items, args, kwargs)

    monkeypatch.setattr(LadybugAccess, "_record", failing)
    with pytest.raises(sqlite3.OperationalError):
        _write_chunk(store, "c2", "Babbage")
    monkeypatch.setattr(LadybugAccess, "_record", record)
    assert _database_chunks(store) == _recorded_chunks(access) == {"c1"}
    chunks, triplets = access.read_all()  # no "unwatched store" error
    assert [c.id for c in chunks] == ["c1"] and [t[1].source_id for t in triplets] == ["Ada"]
    _write_chunk(store, "c2", "Babbage")  # the write can be made again
    assert _database_chunks(store) == _recorded_chunks(access) == {"c1", "c2"}
    close_store(store)


def test_next_open_repairs_a_write_the_records_file_missed(tmp_path, monkeypatch):
    path = str(tmp_path / "graph.lbdb")
    store = ladybug_store(path)
    _write_chunk(store, "c1", "Ada")
    after_write = LadybugAccess.after_write
    monkeypatch.setattr(LadybugAccess, "after_write", lambda self, name, args, kwargs: None)  # the process stops
    _write_chunk(store, "c2", "Babbage")
    monkeypatch.setattr(LadybugAccess, "after_write", after_write)
    assert _database_chunks(store) == {"c1", "c2"}
    close_store(store)
    store = ladybug_store(path)
    access = watched_access(store)
    assert _database_chunks(store) == _recorded_chunks(access) == {"c1"}
    assert [c.id for c in access.read_all()[0]] == ["c1"]
    close_store(store)


def test_ladybug_versions_are_pinned_to_those_installed():
    text = PYPROJECT.read_text(encoding="utf-8")
    for package in ("llama-index-graph-stores-ladybug", "ladybug"):
        pins = set(re.findall(rf'"{re.escape(package)}([^"]*)"', text))
        assert pins == {f"=={version(package)}"}, (package, pins)
