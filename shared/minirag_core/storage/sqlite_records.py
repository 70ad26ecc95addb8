"""The SQLite store's per-chunk records: reading a working graph out of the tables and writing
a change back into them.

An entity's record for a chunk lives in that chunk's ``mentions`` row (name, type, ``raw`` for a
short form homed elsewhere; the description is the mention's), a relation's in a
``relation_sources`` row. A working graph holds the records of the chunks it loads, so its
entities and relations are *partial*: their tallies (stored in the node or relation row) cover
every record, and ``sqlite_stored_records`` reads the rest when a removal needs them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import networkx as nx

from minirag_core.graph.heterogeneous import CHUNK, ENTITY, MENTION, RELATION
from minirag_core.graph.records import CHUNK_LOADER, ITEM_LOADER, PARTIAL, SOURCE_LOADER, WEIGHT_SCALE, record_count

#: ``x IN (SELECT value FROM json_each(?))``: one bound variable for any number of ids
IDS = "(SELECT value FROM json_each(?))"
PAIRS = "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))"
RELATION_COLUMNS = ("weight", "keywords", "description")
#: attributes a row's JSON never holds: the records have rows of their own
_NOT_STORED = ("kind", "sources", PARTIAL)

Rows = Callable[..., list[tuple[Any, ...]]]


def ids_param(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def stored_json(attrs: dict[str, Any], exclude: Iterable[str] = ()) -> str:
    skip = {*_NOT_STORED, *exclude}
    return json.dumps({k: v for k, v in attrs.items() if k not in skip}, ensure_ascii=False, sort_keys=True)


def _entity_record(name: str, type_: str, raw: str | None, description: str) -> dict[str, Any]:
    record = {"name": name, "type": type_, "description": description}
    if raw is not None:
        record["raw"] = raw
    return record


def stored_records(rows: Rows, kind: str, key: Any) -> dict[str, dict[str, Any]]:
    """Every stored record of an entity (``key``: its id) or relation (``key``: ``(u, v)``)."""
    if kind == ENTITY:
        return {c: _entity_record(n, t, r, d) for c, n, t, r, d in rows(
            "SELECT chunk, name, type, raw, description FROM mentions WHERE entity = ?", key)}
    return {c: {"weight": w, "keywords": k, "description": d} for c, w, k, d in rows(
        "SELECT chunk, weight, keywords, description FROM relation_sources WHERE u = ? AND v = ?", *key)}


def stored_item(rows: Rows, kind: str, key: Any) -> dict[str, Any] | None:
    """An entity's or relation's stored attributes, partial (no records loaded), or None."""
    if kind == ENTITY:
        found = rows("SELECT attrs FROM nodes WHERE id = ? AND kind = 'entity'", key)
        return {"kind": ENTITY, **json.loads(found[0][0]), "sources": {}, PARTIAL: []} if found else None
    found = rows("SELECT weight, keywords, description, attrs FROM relations WHERE u = ? AND v = ?", *key)
    if not found:
        return None
    weight, keywords, description, attrs = found[0]
    return {"kind": RELATION, "weight": weight, "keywords": keywords, "description": description,
            **json.loads(attrs), "sources": {}, PARTIAL: []}


class WorkingGraphReader:
    """Builds one working graph: chunks with their mentions and relations, entities, and the
    records of the loaded chunks (``finish`` puts what was read into the graph; more chunks can
    be read later through the graph's ``chunk_loader``)."""

    def __init__(self, rows: Rows) -> None:
        self.rows = rows
        self.graph = nx.Graph()
        self.graph.graph[SOURCE_LOADER] = lambda kind, key: stored_records(rows, kind, key)
        self.graph.graph[ITEM_LOADER] = lambda kind, key: stored_item(rows, kind, key)
        self.graph.graph[CHUNK_LOADER] = self.load_more
        self._entity_records: dict[str, dict[str, dict[str, Any]]] = {}
        self._relations: dict[tuple[str, str], dict[str, Any]] = {}  # read, not yet in the graph
        self._relation_records: list[tuple[tuple[str, str], str, dict[str, Any]]] = []
        self._read_pairs: set[tuple[str, str]] = set()
        self._mentions: list[tuple[str, str, dict[str, Any]]] = []

    def load_chunks(self, chunk_ids: Iterable[str], edges: Iterable[tuple[str, str]] = ()) -> set[str]:
        """Read chunk nodes with their mentions and records, their relations and ``edges``;
        return the entity ids those reach."""
        g = self.graph
        wanted = ids_param(sorted(c for c in set(chunk_ids) if c not in g))
        pairs = {(min(u, v), max(u, v)) for u, v in edges}
        for chunk_id, attrs in self.rows(f"SELECT id, attrs FROM nodes WHERE kind = 'chunk' AND id IN {IDS}", wanted):
            g.add_node(chunk_id, kind=CHUNK, **json.loads(attrs))
            pairs.update((min(u, v), max(u, v)) for u, v in g.nodes[chunk_id].get("relations", []))
        entities: set[str] = set()
        for entity, chunk, description, name, type_, raw in self.rows(
                f"SELECT entity, chunk, description, name, type, raw FROM mentions WHERE chunk IN {IDS}", wanted):
            entities.add(entity)
            self._mentions.append((entity, chunk, {"kind": MENTION, "description": description}))
            self._entity_records.setdefault(entity, {})[chunk] = _entity_record(name, type_, raw, description)
        new_pairs = sorted(pairs - self._read_pairs)
        self._read_pairs.update(new_pairs)
        for u, v, weight, keywords, description, attrs in self.rows(
                f"SELECT u, v, weight, keywords, description, attrs FROM relations WHERE (u, v) IN {PAIRS}",
                ids_param([list(p) for p in new_pairs])):
            entities.update((u, v))
            self._relations[u, v] = {"kind": RELATION, "weight": weight, "keywords": keywords,
                                     "description": description, **json.loads(attrs), "sources": {}, PARTIAL: []}
        for u, v, chunk, weight, keywords, description in self.rows(
                f"SELECT u, v, chunk, weight, keywords, description FROM relation_sources WHERE chunk IN {IDS}",
                wanted):
            self._relation_records.append(((u, v), chunk, {"weight": weight, "keywords": keywords,
                                                           "description": description}))
        return entities

    def load_entities(self, entity_ids: Iterable[str]) -> None:
        g = self.graph
        wanted = sorted(e for e in set(entity_ids) if e not in g)
        for entity_id, attrs in self.rows(f"SELECT id, attrs FROM nodes WHERE kind = 'entity' AND id IN {IDS}",
                                          ids_param(wanted)):
            g.add_node(entity_id, kind=ENTITY, **json.loads(attrs), sources={}, **{PARTIAL: []})

    def load_more(self, chunk_ids: Iterable[str]) -> None:
        """Add stored chunks to the graph in use (the records they bring join the items there)."""
        self.load_entities(self.load_chunks(chunk_ids))
        self.finish()

    def finish(self) -> nx.Graph:
        """The working graph with what was read put in: records in their items, and the edges."""
        g = self.graph
        for entity, records in self._entity_records.items():
            if g.has_node(entity):
                sources = g.nodes[entity]["sources"]
                for chunk, record in records.items():
                    sources.setdefault(chunk, record)
        g.add_edges_from(self._mentions)
        g.add_edges_from((u, v, attrs) for (u, v), attrs in self._relations.items())
        for pair, chunk, record in self._relation_records:
            if g.has_edge(*pair):
                g.edges[pair]["sources"].setdefault(chunk, record)
        self._entity_records, self._relations, self._relation_records, self._mentions = {}, {}, [], []
        items = [a for _, a in g.nodes(data=True) if PARTIAL in a] + [a for _, _, a in g.edges(data=True) if PARTIAL in a]
        for attrs in items:
            if len(attrs["sources"]) >= record_count(attrs):  # it holds every record after all
                del attrs[PARTIAL]
        return g


def write_records(db: sqlite3.Connection, g: nx.Graph, nodes: list[str], pairs: list[tuple[str, str]]) -> None:
    """Write the relation records of the change's chunks (``nodes`` that are or were chunks) on
    its relation edges; mention rows carry the entity records and are written with the edges."""
    chunks = [n for n in nodes if not g.has_node(n) or g.nodes[n].get("kind") == CHUNK]
    if not chunks:
        return
    relation_pairs = [(u, v) for u, v in pairs if g.has_edge(u, v) and g.edges[u, v].get("kind") == RELATION]
    db.execute(f"DELETE FROM relation_sources WHERE chunk IN {IDS} AND (u, v) IN {PAIRS}",
               (ids_param(chunks), ids_param([list(p) for p in pairs])))
    db.executemany("DELETE FROM relation_sources WHERE chunk = ?", [(n,) for n in chunks if not g.has_node(n)])
    wanted = set(chunks)
    rows = []
    for u, v in relation_pairs:
        sources = g.edges[u, v]["sources"]
        for chunk in (wanted & sources.keys()):
            record = sources[chunk]
            rows.append((u, v, chunk, float(record["weight"]), record.get("keywords", ""),
                         record.get("description", "")))
    db.executemany("INSERT OR REPLACE INTO relation_sources (u, v, chunk, weight, keywords, description) "
                   "VALUES (?, ?, ?, ?, ?, ?)", rows)


def mention_row(g: nx.Graph, entity: str, chunk: str, description: str) -> tuple[Any, ...]:
    """A mention row with the entity's record for that chunk."""
    record = g.nodes[entity]["sources"][chunk]
    subject = int(entity in g.nodes[chunk].get("subjects", ()))
    return entity, chunk, subject, description, record["name"], record.get("type", ""), record.get("raw")


class RelationKeywords(Mapping):
    """``(u, v) -> keywords`` of every relation edge, streamed from the store's file (``path``;
    None: in memory, read through ``rows``)."""

    def __init__(self, rows: Rows, path: Path | None) -> None:
        self.rows, self.path = rows, path

    def __getitem__(self, edge: tuple[str, str]) -> str:
        found = self.rows("SELECT keywords FROM relations WHERE u = ? AND v = ?", *edge)
        if not found:
            raise KeyError(edge)
        return found[0][0]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return (edge for edge, _ in self.items())

    def __len__(self) -> int:
        return int(self.rows("SELECT count(*) FROM relations")[0][0])

    def items(self) -> Iterator[tuple[tuple[str, str], str]]:  # type: ignore[override]
        query = "SELECT u, v, keywords FROM relations"
        if self.path is None:  # in memory: no second connection can see it
            yield from (((u, v), k) for u, v, k in self.rows(query))
            return
        reader = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            yield from (((u, v), k) for u, v, k in reader.execute(query))
        finally:
            reader.close()


def stated_weights(rows: Rows, chunk_ids: Iterable[str]) -> dict[tuple[str, str], float]:
    """The relation edges the chunks state (``(smaller, larger)``), each with the weight their
    records sum to (in millionths, as a relation's tally sums them): what an index of them holds."""
    found = rows(f"SELECT u, v, SUM(CAST(ROUND(weight * {WEIGHT_SCALE}) AS INTEGER)) FROM relation_sources "
                 f"WHERE chunk IN {IDS} GROUP BY u, v", ids_param(dict.fromkeys(chunk_ids)))
    return {(min(u, v), max(u, v)): total / WEIGHT_SCALE for u, v, total in found}
