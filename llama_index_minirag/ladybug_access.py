"""``LadybugAccess``: MiniRAG's records beside a ``LadybugPropertyGraphStore``.

Ladybug's store keeps a fixed set of columns: entity nodes lose their properties, relations
keep only a label, relations that end at a chunk (MiniRAG's ``MENTIONED_IN``) are not stored
at all, and chunk texts are stripped. So the chunk nodes and ``MENTIONED_IN`` relations written
through a watched store object are also written, unchanged, to a SQLite file beside the
database (``<database>.minirag.sqlite``; in memory for an in-memory database); reads take the
chunks the database still holds, in the order they were first written, with their records.
The file also keeps the write counter other processes read as the version.

The two are written one after the other, so an upsert first notes its chunk ids in the file
(``pending``); if its records then fail to reach the file, the database's copies of those
chunks are deleted again (at once, or when the file is next opened after a process stopped
between the two writes): the database and the file always hold the same chunks.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Optional, Sequence

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, PropertyGraphStore, Relation

from .store_access import StoreAccess, Triplet, written_items

__all__ = ["LadybugAccess", "sidecar_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL,
                                   text TEXT NOT NULL, props TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mentions (chunk TEXT NOT NULL, entity TEXT NOT NULL, name TEXT NOT NULL,
                                     props TEXT NOT NULL, PRIMARY KEY (chunk, entity));
CREATE TABLE IF NOT EXISTS version (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL);
INSERT OR IGNORE INTO version VALUES (0, 0);
CREATE TABLE IF NOT EXISTS pending (id TEXT PRIMARY KEY);
"""
#: the argument of each delete method that names the chunks it deletes (LlamaIndex's signatures)
_DELETED_IDS = {"delete": "ids", "delete_llama_nodes": "node_ids"}


def written_chunk_ids(name: str, items: Any) -> list[str]:
    """The chunk ids a ``name`` write of ``items`` upserts."""
    if not isinstance(items, (list, tuple)):
        return []
    if name == "upsert_nodes":
        return [str(n.id) for n in items if isinstance(n, ChunkNode)]
    if name == "upsert_llama_nodes":
        return [str(n.id_) for n in items]
    return []


def deleted_ids(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """The node ids a ``delete`` / ``delete_llama_nodes`` call names, bound by parameter name."""
    if name not in _DELETED_IDS:
        return []
    try:
        bound = inspect.signature(getattr(PropertyGraphStore, name)).bind(None, *args, **kwargs)
    except TypeError:
        return []
    ids = bound.arguments.get(_DELETED_IDS[name])
    return [str(i) for i in ids] if isinstance(ids, (list, tuple)) else []


def sidecar_path(store: PropertyGraphStore) -> str:
    """The SQLite file beside ``store``'s database (``:memory:`` for an in-memory database)."""
    path = getattr(getattr(store, "db", None), "database_path", None)
    if not path or str(path) == ":memory:":
        return ":memory:"
    return f"{Path(path)}.minirag.sqlite"


class LadybugAccess(StoreAccess):
    """Chunks and per-chunk records from the sidecar, chunk existence from the database."""

    versioned = True

    def __init__(self, store: PropertyGraphStore, mention_label: str, relation_label: str) -> None:
        super().__init__(store, mention_label, relation_label)
        self.path = sidecar_path(store)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._db.executescript(_SCHEMA)
        self.repair()  # a write this file missed (a process that stopped between the two writes)

    def _rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _stored_chunks(self, ids: Optional[Sequence[str]] = None) -> set[str]:
        where = "WHERE c.id IN $ids " if ids is not None else ""
        result = self.store.connection.execute(f"MATCH (c:Chunk) {where}RETURN c.id",
                                               parameters={"ids": list(ids)} if ids is not None else {})
        out = set()
        try:
            while result.has_next():
                out.add(result.get_next()[0])
        finally:
            result.close()
        return out

    def close(self) -> None:
        """Close the sidecar and the store's connections and database (releasing its lock)."""
        for closer in (self.store.async_connection, self.store.connection, self.store.db):
            closer.close()
        self._db.close()

    def _read(self, ids: Optional[Sequence[str]]) -> tuple[list[Any], list[Triplet]]:
        present = self._stored_chunks(ids)
        json_ids = json.dumps(sorted(present))
        chunks = [ChunkNode(id_=cid, text=text, properties=json.loads(props)) for cid, text, props in self._rows(
            "SELECT id, text, props FROM chunks WHERE id IN (SELECT value FROM json_each(?)) ORDER BY seq",
            json_ids)]
        if len(chunks) < len(present):
            raise RuntimeError(
                f"{len(present) - len(chunks)} of the Ladybug database's {len(present)} chunks have no MiniRAG "
                f"records in {self.path}: they were written through a store object MiniRAG did not watch; "
                "open the store with llama_index_minirag.ladybug_store(path) (or call "
                "llama_index_minirag.store_watch.watch(store)) before indexing")
        triplets: list[Triplet] = []
        for chunk, entity, name, props in self._rows(
                "SELECT m.chunk, m.entity, m.name, m.props FROM mentions m JOIN chunks c ON c.id = m.chunk "
                "WHERE m.chunk IN (SELECT value FROM json_each(?)) ORDER BY c.seq, m.rowid", json_ids):
            triplets.append((EntityNode(name=name, label="Entity"),
                             Relation(label=self.mention_label, source_id=entity, target_id=chunk,
                                      properties=json.loads(props)),
                             ChunkNode(id_=chunk, text="")))
        return chunks, triplets

    def read_all(self) -> tuple[list[Any], list[Triplet]]:
        return self._read(None)

    def read_chunks(self, chunk_ids: Sequence[str], touched: Sequence[str]) -> tuple[list[Any], list[Triplet]]:
        return self._read(list(chunk_ids))

    def version(self) -> Optional[str]:
        n = self._rows("SELECT n FROM version WHERE id = 0")[0][0]
        result = self.store.connection.execute("MATCH (c:Chunk) RETURN count(c)")
        try:
            chunks = result.get_next()[0]
        finally:
            result.close()
        return f"{n}:{chunks}"

    def bump(self) -> None:
        self._rows("UPDATE version SET n = n + 1 WHERE id = 0")

    def before_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Note the chunks an upsert is about to write, so a write whose records never reach
        this file can be undone (:meth:`repair`)."""
        ids = written_chunk_ids(name, written_items(args, kwargs))
        if ids:
            with self._lock:
                self._db.executemany("INSERT OR IGNORE INTO pending VALUES (?)", [(i,) for i in ids])

    def after_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Record the write's chunks and mentions; if that fails, undo the write's new chunks in
        the database (:meth:`repair`) and raise, so the two never disagree."""
        items = written_items(args, kwargs)
        try:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._record(name, items, args, kwargs)
                    self._db.execute("DELETE FROM pending WHERE id IN (SELECT value FROM json_each(?))",
                                     (json.dumps(written_chunk_ids(name, items)),))
                    self._db.execute("UPDATE version SET n = n + 1 WHERE id = 0")
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
        except BaseException:
            self.repair()
            raise

    def after_failed_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A write the database refused may have stored some of its chunks: undo them."""
        self.repair()
        self.bump()

    def repair(self) -> list[str]:
        """Undo upserts whose records are missing here: delete from the database the chunks a
        write noted (:meth:`before_write`) but never recorded, and return their ids. Chunks
        already recorded keep their records (they were written before), so the database and
        this file hold the same chunks again."""
        pending = [row[0] for row in self._rows("SELECT id FROM pending")]
        if not pending:
            return []
        recorded = {row[0] for row in self._rows(
            "SELECT id FROM chunks WHERE id IN (SELECT value FROM json_each(?))", json.dumps(pending))}
        orphans = sorted(set(pending) - recorded)
        if orphans:  # the class's own delete: the watched object's would record a write
            type(self.store).delete(self.store, ids=orphans)
        self._rows("DELETE FROM pending WHERE id IN (SELECT value FROM json_each(?))", json.dumps(pending))
        return orphans

    def _record(self, name: str, items: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if name in ("upsert_nodes", "upsert_llama_nodes") and isinstance(items, (list, tuple)):
            for node in items:
                if isinstance(node, ChunkNode):
                    cid, text, props = node.id, node.text, dict(node.properties)
                elif name == "upsert_llama_nodes":
                    from llama_index.core.vector_stores.utils import node_to_metadata_dict

                    cid, text = node.id_, node.get_content()
                    props = node_to_metadata_dict(node, remove_text=True, flat_metadata=False)
                else:
                    continue
                self._db.execute(
                    "INSERT INTO chunks (id, text, props) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE "
                    "SET text = excluded.text, props = excluded.props",
                    (cid, text, json.dumps(props, ensure_ascii=False, default=str)))
        elif name == "upsert_relations" and isinstance(items, (list, tuple)):
            for rel in items:
                if rel.label == self.mention_label:
                    props = dict(rel.properties or {})
                    self._db.execute(
                        "INSERT INTO mentions VALUES (?, ?, ?, ?) ON CONFLICT (chunk, entity) DO UPDATE "
                        "SET name = excluded.name, props = excluded.props",
                        (rel.target_id, rel.source_id, str(props.get("entity_name") or rel.source_id),
                         json.dumps(props, ensure_ascii=False, default=str)))
        elif name in _DELETED_IDS:  # best effort: reads skip chunks the database lost
            ids = deleted_ids(name, args, kwargs)
            if ids:
                self._db.execute("DELETE FROM mentions WHERE chunk IN (SELECT value FROM json_each(?))",
                                 (json.dumps(list(ids)),))
                self._db.execute("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
                                 (json.dumps(list(ids)),))
