"""``LadybugAccess``: MiniRAG's records beside a ``LadybugPropertyGraphStore``.

Ladybug's store keeps a fixed set of columns: entity nodes lose their properties, relations
keep only a label, relations that end at a chunk (MiniRAG's ``MENTIONED_IN``) are not stored
at all, and chunk texts are stripped. So the chunk nodes and ``MENTIONED_IN`` relations written
through a watched store object are also written, unchanged, to a SQLite file beside the
database (``<database>.minirag.sqlite``; in memory for an in-memory database); reads take the
chunks the database still holds, in the order they were first written, with their records.
The file also keeps the write counter other processes read as the version.
"""

from __future__ import annotations

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
"""


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

    def after_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._record(name, written_items(args, kwargs), args, kwargs)
                self._db.execute("UPDATE version SET n = n + 1 WHERE id = 0")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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
        elif name in ("delete", "delete_llama_nodes"):  # best effort: reads skip chunks the database lost
            ids = kwargs.get("ids") or kwargs.get("node_ids") or (args[3] if name == "delete" and len(args) > 3
                                                                  else args[0] if args else None)
            if isinstance(ids, (list, tuple)) and ids:
                self._db.execute("DELETE FROM mentions WHERE chunk IN (SELECT value FROM json_each(?))",
                                 (json.dumps(list(ids)),))
                self._db.execute("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
                                 (json.dumps(list(ids)),))
