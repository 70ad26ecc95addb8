"""The graph in one SQLite file: the embedded ``GraphStore`` for corpora larger than memory.

Tables: ``nodes`` (entities and chunks: id, kind, name, type, attributes as JSON, among them an
entity's tally, and for the entities alias consolidation reads, their surname), ``mentions``
(entity-chunk edges: description, ``subject`` for the chunks about the entity, and the entity's
record for that chunk), ``relations`` (entity-entity edges stored from the smaller id to the
larger: weight, keywords, description, tally), ``relation_sources`` (a relation's record per
chunk), ``documents`` (the registry) and ``meta`` (``seq`` counts writes, how another process's
writes are noticed). Records live in rows of their own (``sqlite_records``), so an entity seen in
thousands of chunks is one short row, and a write reads and writes the records of its chunks only.

Memory holds the topology, not the text: mini mode's k-hop expansion runs on relation arrays
(``graph/arrays.py``) read from the ``(u, v, weight)`` columns once per graph version, and the chunks
linked to each entity come from arrays of ids read with them (``ChunkLinks``); every other
read is an indexed query (``entity_subgraph`` asks the table for each expanded entity's strongest
neighbours, so light mode never reads the whole graph). A write loads only what it reads and changes
(``working_graph``, with the entities sharing a surname with what it touches, so aliases
consolidate as in the networkx store) and saves the change in one transaction: a process killed
mid-save leaves the file as it was.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping

import networkx as nx

from minirag_core.graph.aliases import alias_surname
from minirag_core.graph.heterogeneous import CHUNK, ENTITY, RELATION
from minirag_core.graph.arrays import ChunkLinks, RelationArrays, _edge_columns, bounded_expansion
from minirag_core.storage.base import Change, change_items, rank_type_pool
from minirag_core.storage.sqlite_schema import check_format, create_tables
from minirag_core.storage.sqlite_records import (IDS, PAIRS, RELATION_COLUMNS, RelationKeywords, WorkingGraphReader, ids_param,
                             mention_row, stated_weights, stored_json, write_records)

_IDS, _PAIRS, _RELATION_COLUMNS = IDS, PAIRS, RELATION_COLUMNS
_ids = ids_param


class SQLiteGraphStore:
    """MiniRAG's graph in a SQLite file (``None``: in memory); implements ``GraphStore``."""

    loads_alias_neighbourhood = True  # working_graph() holds every entity consolidation reads
    MAX_NEIGHBORS = 40  # new relations one node adds to an ``entity_subgraph`` expansion

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.db = sqlite3.connect(str(self.path) if self.path else ":memory:", check_same_thread=False,
                                  isolation_level=None)
        if self.path is not None:
            self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        check_format(self.db, self.path)
        create_tables(self.db)
        self._work = nx.Graph()
        self._documents: dict[str, dict[str, Any]] = {}
        self._seq: int | None = None
        self._arrays: RelationArrays | None = None
        self._links: dict[bool, ChunkLinks] = {}  # every entity-chunk edge (False), subject edges (True)
        self._entities: tuple[list[str], list[str], dict[str, int]] | None = None
        self.reload_if_changed()

    def __repr__(self) -> str:
        return f"SQLiteGraphStore({str(self.path) if self.path else ':memory:'})"

    def _rows(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.db.execute(query, params).fetchall()

    # -- registry and change tracking -----------------------------------------------------
    def settle(self) -> None:
        """Nothing to fold: every write is already in its final form."""

    def reload_if_changed(self) -> bool:
        with self.lock:
            rows = self._rows("SELECT value FROM meta WHERE key = 'seq'")
            seq = int(rows[0][0]) if rows else 0
            if seq == self._seq:
                return False
            self._documents = {d: json.loads(r) for d, r in self._rows("SELECT id, record FROM documents")}
            self._seq = seq
            self.changed()
            return True

    def changed(self) -> None:
        """Forget the relation arrays and chunk links (the index calls this after every write)."""
        with self.lock:
            self._arrays = self._entities = None
            self._links = {}

    def documents(self) -> dict[str, dict[str, Any]]:
        return self._documents

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def copy_from(self, graph: nx.Graph, documents: dict[str, dict[str, Any]]) -> None:
        """Write a whole networkx graph and registry (another store's) in one transaction."""
        with self.lock:
            self._documents = {k: dict(v) for k, v in documents.items()}
            self._work = graph
            self.save()

    # -- writes -----------------------------------------------------------------------------
    def working_graph(self, chunk_ids: Iterable[str] = (), entity_ids: Iterable[str] = (),
                      edges: Iterable[tuple[str, str]] = ()) -> nx.Graph:
        """The given chunks (with their mentions, entities and listed relations), entities and
        relation edges, plus every entity sharing a surname with one of them that alias
        consolidation reads. Entities and relations hold the records of the loaded chunks; the
        rest, and the chunks of short forms consolidation moves, are read when needed."""
        with self.lock:
            reader = WorkingGraphReader(self._rows)
            entities = set(entity_ids) | reader.load_chunks(chunk_ids, edges)
            reader.load_entities(entities)
            surnames = {e.split()[-1] for e in entities if e.strip()}
            holders = {i for (i,) in self._rows(f"SELECT id FROM nodes WHERE surname IN {_IDS}", _ids(surnames))}
            reader.load_entities(holders)
            self._work = reader.finish()
            return self._work

    def save(self, change: Change | None = None) -> None:
        """Write what ``change`` names from the last working graph (without one: all of it) in
        one transaction."""
        with self.lock:
            g = self._work
            nodes, pairs, docs = change_items(g, change, self._documents)
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self._write_nodes(g, nodes)
                self._write_edges(g, sorted(pairs))
                write_records(self.db, g, nodes, sorted(pairs))
                self._write_documents(docs)
                self.db.execute("INSERT INTO meta (key, value) VALUES ('seq', 1) "
                                "ON CONFLICT (key) DO UPDATE SET value = value + 1")
                self._seq = int(self.db.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()[0])
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self._work = nx.Graph()
            self.changed()

    def _write_nodes(self, g: nx.Graph, nodes: list[str]) -> None:
        rows, gone = [], []
        for n in nodes:
            if not g.has_node(n):
                gone.append((n,))
                continue
            attrs = g.nodes[n]
            kind = attrs.get("kind")
            body = stored_json(attrs)
            if kind == ENTITY:
                rows.append((n, kind, attrs.get("name"), attrs.get("type"), alias_surname(n, attrs), body))
            else:
                rows.append((n, kind, None, None, None, body))
        self.db.executemany("INSERT INTO nodes (id, kind, name, type, surname, attrs) VALUES (?, ?, ?, ?, ?, ?) "
                            "ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, "
                            "type = excluded.type, surname = excluded.surname, attrs = excluded.attrs", rows)
        if gone:  # a removed node takes its edges with it
            self.db.executemany("DELETE FROM nodes WHERE id = ?", gone)
            self.db.executemany("DELETE FROM mentions WHERE entity = ?1 OR chunk = ?1", gone)
            self.db.executemany("DELETE FROM relation_sources WHERE (u, v) IN "
                                "(SELECT u, v FROM relations WHERE u = ?1 OR v = ?1)", gone)
            self.db.executemany("DELETE FROM relations WHERE u = ?1 OR v = ?1", gone)

    def _write_edges(self, g: nx.Graph, pairs: list[tuple[str, str]]) -> None:
        relations, mentions, gone = [], [], []
        for u, v in pairs:
            if not g.has_edge(u, v):
                gone.append((u, v))
                continue
            attrs = g.edges[u, v]
            if attrs.get("kind") == RELATION:
                relations.append((u, v, float(attrs["weight"]), attrs.get("keywords", ""),
                                  attrs.get("description", ""), stored_json(attrs, _RELATION_COLUMNS)))
            else:
                entity, chunk = (u, v) if g.nodes[v].get("kind") == CHUNK else (v, u)
                mentions.append(mention_row(g, entity, chunk, attrs.get("description", "")))
        self.db.executemany("DELETE FROM relation_sources WHERE u = ? AND v = ?", gone)
        self.db.executemany("DELETE FROM relations WHERE u = ? AND v = ?", gone)
        self.db.executemany("DELETE FROM mentions WHERE (entity = ?1 AND chunk = ?2) OR (entity = ?2 AND chunk = ?1)",
                            gone)
        self.db.executemany("INSERT OR REPLACE INTO relations (u, v, weight, keywords, description, attrs) "
                            "VALUES (?, ?, ?, ?, ?, ?)", relations)
        self.db.executemany("INSERT OR REPLACE INTO mentions (entity, chunk, subject, description, name, type, raw) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", mentions)

    def _write_documents(self, docs: list[str]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO documents (id, record) VALUES (?, ?)",
                            [(d, json.dumps(self._documents[d], ensure_ascii=False, sort_keys=True))
                             for d in docs if d in self._documents])
        self.db.executemany("DELETE FROM documents WHERE id = ?", [(d,) for d in docs if d not in self._documents])

    # -- GraphView ----------------------------------------------------------------------------
    def entity(self, entity_id: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT name, type, json_extract(attrs, '$.description') FROM nodes "
                          "WHERE id = ? AND kind = 'entity'", entity_id)
        if not rows:
            return None
        name, type_, description = rows[0]
        chunks = [c for (c,) in self._rows("SELECT chunk FROM mentions WHERE entity = ? ORDER BY chunk", entity_id)]
        return {"name": name, "type": type_, "description": description or "", "source_chunks": chunks}

    def relation_arrays(self) -> RelationArrays:
        """Every relation edge as arrays (numbers and weights only), built once per graph version."""
        with self.lock:
            if self._arrays is None:
                ids, types, position = self._entity_rows()
                edges = _edge_columns([(position[u], position[v], w)
                                       for u, v, w in self.db.execute("SELECT u, v, weight FROM relations")])
                self._arrays = RelationArrays(ids, types, edges, self._relation_attrs, self.MAX_NEIGHBORS, position)
            return self._arrays

    def _entity_rows(self) -> tuple[list[str], list[str], dict[str, int]]:
        """Every entity's id (sorted), type and position, read once per graph version for the
        relation arrays and the chunk links (light mode reads the links alone)."""
        with self.lock:
            if self._entities is None:
                rows = sorted(self._rows("SELECT id, type FROM nodes WHERE kind = 'entity'"))
                ids = [e for e, _ in rows]
                self._entities = (ids, [str(t or "") for _, t in rows], {e: i for i, e in enumerate(ids)})
            return self._entities

    def _relation_attrs(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """Weight, keywords and description of the relations between the given pairs (one query)."""
        found = {(u, v): dict(zip(_RELATION_COLUMNS, rest)) for u, v, *rest in self._rows(
            f"SELECT u, v, weight, keywords, description FROM relations WHERE (u, v) IN {_PAIRS}",
            _ids(sorted({(min(a, b), max(a, b)) for a, b in pairs})))}
        return {(a, b): found.get((min(a, b), max(a, b)), {}) for a, b in pairs}

    def entity_subgraph(self, seeds: Iterable[str], hops: int, max_nodes: int,
                        max_neighbors: int | None = None) -> nx.Graph:
        """Breadth-first from the seeds over relation edges; each node contributes at most
        its ``max_neighbors`` strongest new relations (as ``NetworkXGraphStore`` does), each
        node's asked of the indexed table in order (strongest first, then by id)."""
        cap = self.MAX_NEIGHBORS if max_neighbors is None else max_neighbors
        order = list(dict.fromkeys(seeds))
        with self.lock:
            known = {n for (n,) in self._rows(f"SELECT id FROM nodes WHERE kind = 'entity' AND id IN {_IDS}",
                                               _ids(order))}
            depth = bounded_expansion([s for s in order if s in known],
                                      lambda node, reached: self._strongest(node, cap + reached), hops, max_nodes, cap)
            ids = _ids(list(depth))
            found = {i: (name, type_) for i, name, type_ in self._rows(
                f"SELECT id, name, type FROM nodes WHERE id IN {_IDS}", ids)}
            edges = self._rows(f"SELECT u, v, weight, keywords, description FROM relations "
                               f"WHERE u IN {_IDS} AND v IN {_IDS}", ids, ids)
        sub = nx.Graph()
        sub.add_nodes_from((n, {"name": found[n][0], "type": str(found[n][1] or ""), "hop": d}) for n, d in depth.items())
        for u, v, weight, keywords, description in sorted(edges):
            sub.add_edge(u, v, weight=weight, keywords=keywords, description=description)
        return sub

    def _strongest(self, node: str, limit: int) -> list[str]:
        """``node``'s ``limit`` strongest relation neighbours (ties by id), read from the index."""
        return [n for (n,) in self.db.execute(
            "SELECT other FROM (SELECT v AS other, weight FROM relations WHERE u = ?1 UNION ALL "
            "SELECT u, weight FROM relations WHERE v = ?1) ORDER BY weight DESC, other LIMIT ?2", (node, limit))]

    def chunk_links(self, entity_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """For each entity, its chunks (by id) and the mention's description."""
        wanted = list(dict.fromkeys(entity_ids))
        present = {i for (i,) in self._rows(f"SELECT id FROM nodes WHERE id IN {_IDS}", _ids(wanted))}
        links: dict[str, dict[str, str]] = {e: {} for e in wanted if e in present}
        for entity, chunk, description in self._rows(
                f"SELECT entity, chunk, description FROM mentions WHERE entity IN {_IDS} ORDER BY entity, chunk",
                _ids(wanted)):
            links[entity][chunk] = description
        return links

    def _mention_lists(self, ids: Iterable[str], key: str, value: str) -> dict[str, list[str]]:
        """For each id present, the ``value`` column of the mentions it is the ``key`` of, sorted."""
        wanted = list(dict.fromkeys(ids))
        present = {i for (i,) in self._rows(f"SELECT id FROM nodes WHERE id IN {_IDS}", _ids(wanted))}
        found: dict[str, list[str]] = {i: [] for i in wanted if i in present}
        for k, v in self._rows(f"SELECT {key}, {value} FROM mentions WHERE {key} IN {_IDS} ORDER BY {key}, {value}",
                               _ids(wanted)):
            found[k].append(v)
        return found

    def entity_chunk_ids(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        """For each entity, its chunk ids (from the in-memory links; any other id present, such
        as a chunk's, gets its list from the table)."""
        wanted = list(dict.fromkeys(entity_ids))
        found = self.link_arrays().chunk_lists(wanted)
        rest = [i for i in wanted if i not in found]
        if rest:
            found.update(self._mention_lists(rest, "entity", "chunk"))
        return {i: found[i] for i in wanted if i in found}

    def link_arrays(self, subjects: bool = False) -> ChunkLinks:
        """Every entity-chunk edge (or every edge to a chunk about the entity) as arrays of ids,
        built once per graph version: a query's links are thousands of rows, read from memory."""
        with self.lock:
            if not self._links:  # both at once, on one listing of the chunks: a later query lists nothing
                position, chunk_ids = self._entity_rows()[2], self.chunk_ids()
                for kind in (False, True):
                    rows = self.db.execute("SELECT entity, chunk FROM mentions" + (" WHERE subject = 1" if kind else ""))
                    self._links[kind] = ChunkLinks(position, chunk_ids, rows)
            return self._links[subjects]

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        wanted = list(dict.fromkeys(chunk_ids))
        found = {}
        # the fields pulled out by SQLite: parsing each whole record in Python cost 1.4x as much
        for chunk_id, text, doc_id, order, n_tokens, subjects, start, end, path in self._rows(
                "SELECT id, json_extract(attrs, '$.text'), json_extract(attrs, '$.doc_id'), "
                "json_extract(attrs, '$.order'), json_extract(attrs, '$.n_tokens'), json_extract(attrs, '$.subjects'), "
                "json_extract(attrs, '$.start_index'), json_extract(attrs, '$.end_index'), "
                f"json_extract(attrs, '$.heading_path') FROM nodes WHERE kind = 'chunk' AND id IN {_IDS}", _ids(wanted)):
            found[chunk_id] = {"text": text, "doc_id": doc_id, "order": order, "n_tokens": n_tokens,
                               "subjects": json.loads(subjects) if subjects else [], "start_index": start,
                               "end_index": end, "heading_path": json.loads(path) if path else []}
        return {c: found[c] for c in wanted if c in found}

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """The entities each chunk mentions (its entity-chunk edges)."""
        return self._mention_lists(chunk_ids, "chunk", "entity")

    def relation_weights(self, chunk_ids: Iterable[str]) -> dict[tuple[str, str], float]:
        """The relation edges the chunks state, each with the weight their records sum to."""
        return stated_weights(self._rows, chunk_ids)

    def subject_chunks(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        """For each entity, the chunks that are *about* it, if any (from in-memory links)."""
        found = self.link_arrays(subjects=True).chunk_lists(dict.fromkeys(entity_ids))
        return {e: chunks for e, chunks in found.items() if chunks}

    def chunk_ids(self) -> list[str]:
        return sorted(i for (i,) in self._rows("SELECT id FROM nodes WHERE kind = 'chunk'"))

    def count_chunks(self) -> int:
        return int(self._rows("SELECT count(*) FROM nodes WHERE kind = 'chunk'")[0][0])

    def entity_ids(self) -> list[str]:
        return sorted(i for (i,) in self._rows("SELECT id FROM nodes WHERE kind = 'entity'"))

    def relation_edges(self) -> list[tuple[str, str]]:
        return sorted((u, v) for u, v in self._rows("SELECT u, v FROM relations"))

    def relation_keywords(self) -> Mapping[tuple[str, str], str]:
        """Every relation edge with its keywords, read from the file as it is iterated (a dict
        of millions of edges would be the largest thing a reopened index holds)."""
        return RelationKeywords(self._rows, self.path)

    def type_pool(self, examples_per_type: int = 3) -> dict[str, list[str]]:
        """As ``NetworkXGraphStore.type_pool`` (degree: relations plus mentions; ties in the
        order entities were first stored)."""
        return rank_type_pool(self._rows(
            "SELECT n.type, n.name, (SELECT count(*) FROM relations WHERE u = n.id) "
            "+ (SELECT count(*) FROM relations WHERE v = n.id) "
            "+ (SELECT count(*) FROM mentions WHERE entity = n.id) "
            "FROM nodes AS n WHERE n.kind = 'entity' ORDER BY n.rowid"), examples_per_type)

    def stats(self) -> dict[str, int]:
        count = lambda q: int(self._rows(q)[0][0])  # noqa: E731
        return {"chunks": self.count_chunks(),
                "entities": count("SELECT count(*) FROM nodes WHERE kind = 'entity'"),
                "relations": count("SELECT count(*) FROM relations"),
                "mentions": count("SELECT count(*) FROM mentions")}
