"""``BatchedLadybugStore``: ``LadybugPropertyGraphStore`` with entity and relation upserts in
batches.

The stock store sends one openCypher statement per entity and two per relation, then checkpoints
and counts every ``MENTIONS`` edge in the database after each call: a MiniRAG graph (tens of
thousands of relations) takes minutes to write. Here, in the store's unstructured schema (its
default: every entity in the ``Entity`` table, every relation a ``LINKS`` edge), the same
writes go as ``UNWIND $rows`` statements of up to :data:`BATCH` rows, with the stock
semantics: the last write of a node or relation wins, relations whose ends are not entity
nodes are skipped, and each relation with a ``triplet_source_id`` links that chunk to both of
its ends by ``MENTIONS``. Chunk nodes, structured schemas and deletes go through the stock
code.

Only the store's public attributes (``connection``, ``has_structured_schema``) and Ladybug's
public ``Connection.execute`` are used; the table layout written here is that of the exact
versions pinned in ``pyproject.toml`` (``tests/llama_index_adapter/test_ladybug_writes.py``
compares it with the stock store's).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, LabelledNode, Relation
from llama_index.graph_stores.ladybug import LadybugPropertyGraphStore

__all__ = ["BATCH", "BatchedLadybugStore"]

logger = logging.getLogger(__name__)

#: rows per ``UNWIND`` statement
BATCH = 2000

_ENTITY_PROPS = ("creation_date", "last_modified_date", "file_name", "file_path", "file_size", "file_type",
                 "triplet_source_id")


def _batches(rows: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), BATCH):
        yield list(rows[start:start + BATCH])


def _last_wins(rows: Iterable[tuple[Any, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per key, the last one written, in the order keys were first seen."""
    out: dict[Any, dict[str, Any]] = {}
    for key, row in rows:
        out[key] = row
    return list(out.values())


class BatchedLadybugStore(LadybugPropertyGraphStore):
    """A ``LadybugPropertyGraphStore`` whose entity and relation upserts are batched (unstructured
    schema; a structured schema keeps the stock, one-statement-per-row writes)."""

    def _quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def _node_tables(self) -> set[str]:
        """The database's node tables."""
        return {row[0] for row in self.connection.execute("CALL show_tables() WHERE type = 'NODE' RETURN name")}

    def _flush(self) -> None:
        """Write the write-ahead log to the database file (as the stock store does after a write)."""
        try:
            self.connection.execute("CHECKPOINT;")
        except Exception as exc:  # noqa: BLE001 - the data is safe in the log; the stock store logs it too
            logger.debug("Ladybug CHECKPOINT failed: %s", exc)

    def upsert_nodes(self, nodes: list[LabelledNode]) -> None:
        if self.has_structured_schema:
            return super().upsert_nodes(nodes)
        chunks = [n for n in nodes if isinstance(n, ChunkNode)]
        entities = [n for n in nodes if isinstance(n, EntityNode)]
        if chunks:
            super().upsert_nodes(chunks)
        if not entities:
            return
        tables = self._node_tables()
        by_table: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for entity in entities:  # the stock rule: the label's own table if there is one, else Entity
            table = entity.label if entity.label in tables else "Entity"
            props = entity.properties or {}
            row = {"id": entity.name, "label": entity.label, "name": entity.name,
                   **{key: props.get(key) for key in _ENTITY_PROPS},
                   "ref_doc_id": props.get("ref_doc_id") or props.get("doc_id")}
            by_table.setdefault(table, []).append((entity.name, row))
        for table, keyed in by_table.items():
            for rows in _batches(_last_wins(keyed)):
                self.connection.execute(
                    f"UNWIND $rows AS row MERGE (e:{self._quote(table)} {{id: row.id}}) "
                    "SET e.label = row.label, e.name = row.name, e.creation_date = date(row.creation_date), "
                    "e.last_modified_date = date(row.last_modified_date), e.file_name = row.file_name, "
                    "e.file_path = row.file_path, e.file_size = CAST(row.file_size AS INT64), "
                    "e.file_type = row.file_type, "
                    "e.triplet_source_id = row.triplet_source_id, e.ref_doc_id = row.ref_doc_id",
                    parameters={"rows": rows})
        self._flush()

    def upsert_relations(self, relations: list[Relation]) -> None:
        if self.has_structured_schema:
            return super().upsert_relations(relations)
        rows_in = [{"s": r.source_id, "t": r.target_id, "label": r.label,
                    "tsid": (r.properties or {}).get("triplet_source_id")} for r in relations]
        links = _last_wins(((row["s"], row["t"], row["label"]), row) for row in rows_in)
        mentions = _last_wins(((row["s"], row["t"], row["tsid"]), row) for row in rows_in if row["tsid"])
        for rows in _batches(links):
            self.connection.execute(
                "UNWIND $rows AS row MATCH (a:Entity {id: row.s}), (b:Entity {id: row.t}) "
                "MERGE (a)-[r:LINKS {label: row.label}]->(b) SET r.triplet_source_id = row.tsid",
                parameters={"rows": rows})
        for rows in _batches(mentions):
            self.connection.execute(
                "UNWIND $rows AS row MATCH (a:Entity {id: row.s}), (b:Entity {id: row.t}), "
                "(c:Chunk {id: row.tsid}) MERGE (c)-[:MENTIONS]->(a) MERGE (c)-[:MENTIONS]->(b)",
                parameters={"rows": rows})
        self._flush()
