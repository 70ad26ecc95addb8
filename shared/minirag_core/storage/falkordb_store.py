"""The graph on a FalkorDB server (a Redis module speaking openCypher): the scale-out ``GraphStore``.

Schema: ``(:Entity {id, ...})``, ``(:Chunk {id, ...})``, ``(:Entity)-[:MENTION]->(:Chunk)``
(``subject`` marks the chunks that are about the entity), ``(:Entity)-[:RELATION]->(:Entity)``
stored from the smaller id to the larger, ``(:Doc {id, record})`` for the registry and one
``(:Meta)`` node whose ``seq`` counts writes (how another process's writes are noticed).
Attributes that are not scalars or lists of scalars (an entity's per-chunk ``sources``, a
chunk's ``relations``) are stored as JSON strings under ``<name>_json``.

Reads are openCypher queries: the k-hop expansion of ``entity_subgraph`` runs one query per hop on
the server (each node's strongest relations first). A write loads only what it reads and
changes (``working_graph``) and sends the change back in a few batched ``UNWIND`` queries,
all in one MULTI/EXEC transaction (a process killed mid-save leaves the server as it was).
The registry (one small record per document) is held in memory and re-read when ``seq`` moves.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Iterable
from urllib.parse import unquote, urlparse

import networkx as nx

from minirag_core.graph.heterogeneous import CHUNK, ENTITY, MENTION, RELATION
from minirag_core.graph.records import ensure_tally
from minirag_core.storage.base import Change, change_items, rank_type_pool
from minirag_core.storage.namespaces import namespaced

SCHEME = "falkordb"
_LABEL = {ENTITY: "Entity", CHUNK: "Chunk"}
_SCALARS = (str, int, float, bool)


def parse_url(url: str) -> tuple[str, int, str | None, str | None, str | None]:
    """``falkordb://[user:password@]host[:port][/graph]`` -> (host, port, graph, user, password)."""
    parsed = urlparse(url)
    if parsed.scheme not in (SCHEME, "redis"):
        raise ValueError(f"{url!r}: expected falkordb://host:port[/graph]")
    graph = parsed.path.strip("/") or None
    return (parsed.hostname or "localhost", parsed.port or 6379, graph,
            unquote(parsed.username) if parsed.username else None,
            unquote(parsed.password) if parsed.password else None)


def graph_name(graph: str | None, namespace: str | None) -> str:
    """The graph a store opens: ``namespace``'s (``storage/namespaces.py``), else ``graph``; both
    must agree when both are given."""
    if namespace is None:
        if not graph:
            raise ValueError("FalkorDBGraphStore needs a graph name or a namespace")
        return graph
    name = namespaced(namespace)
    if graph and graph != name:
        raise ValueError(f"graph {graph!r} is not namespace {namespace!r}'s graph ({name!r}): give one of them")
    return name


def _encode(attrs: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for key, value in attrs.items():
        if key == "kind" or value is None:
            continue
        if isinstance(value, _SCALARS) or (isinstance(value, list) and all(isinstance(v, _SCALARS) for v in value)
                                           and value):
            props[key] = value
        else:
            props[f"{key}_json"] = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return props


def _decode(props: dict[str, Any], kind: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {"kind": kind}
    for key, value in props.items():
        if key.endswith("_json"):
            attrs[key[:-5]] = json.loads(value)
        elif key not in ("id", "subject"):
            attrs[key] = value
    return ensure_tally(attrs)


class FalkorDBGraphStore:
    """MiniRAG's graph in one named graph of a FalkorDB server; implements ``GraphStore``."""

    def __init__(self, graph: str | None = None, *, namespace: str | None = None, host: str = "localhost",
                 port: int = 6379, username: str | None = None, password: str | None = None,
                 max_neighbors: int = 40) -> None:
        from falkordb import FalkorDB

        self.name, self.host, self.port = graph_name(graph, namespace), host, port
        self.max_neighbors = max_neighbors
        self.db = FalkorDB(host=host, port=port, username=username, password=password)
        self._graph = self.db.select_graph(graph)
        self.lock = threading.RLock()
        self._work = nx.Graph()
        self._documents: dict[str, dict[str, Any]] = {}
        self._seq: int | None = None
        for label in ("Entity", "Chunk", "Doc"):
            self._ensure_index(label)
        self.reload_if_changed()

    @classmethod
    def from_url(cls, url: str, graph: str | None = None, namespace: str | None = None) -> "FalkorDBGraphStore":
        """Open the graph a ``falkordb://host:port/graph`` URL names (``graph`` if it names none),
        or ``namespace``'s graph."""
        host, port, named, user, password = parse_url(url)
        if not (named or graph or namespace):
            raise ValueError(f"{url!r} names no graph: use falkordb://host:port/GRAPH")
        return cls(named or graph, namespace=namespace, host=host, port=port, username=user, password=password)

    def __repr__(self) -> str:
        return f"FalkorDBGraphStore({SCHEME}://{self.host}:{self.port}/{self.name})"

    def _q(self, query: str, **params: Any) -> list[list[Any]]:
        return self._graph.query(query, params=params or None).result_set

    def _ensure_index(self, label: str) -> None:
        try:
            self._q(f"CREATE INDEX FOR (n:{label}) ON (n.id)")
        except Exception as exc:  # already there (the server says so in words, not a code)
            if "already indexed" not in str(exc).lower():
                raise

    # -- registry and change tracking -----------------------------------------------------
    def _server_seq(self) -> int:
        rows = self._q("MATCH (m:Meta {id: 'meta'}) RETURN m.seq")
        return int(rows[0][0]) if rows else 0

    def settle(self) -> None:
        """Nothing to fold: every write is already in its final form."""

    def reload_if_changed(self) -> bool:
        seq = self._server_seq()
        if seq == self._seq:
            return False
        with self.lock:
            rows = self._q("MATCH (d:Doc) RETURN d.id, d.record")
            self._documents = {doc_id: json.loads(record) for doc_id, record in rows}
            self._seq = seq
        return True

    def changed(self) -> None:
        """Nothing is derived from the graph in this process."""

    def documents(self) -> dict[str, dict[str, Any]]:
        return self._documents

    def drop(self) -> None:
        """Delete the whole graph from the server."""
        with self.lock:
            try:
                self._graph.delete()
            except Exception as exc:
                if "empty key" not in str(exc).lower() and "invalid graph" not in str(exc).lower():
                    raise
            self._documents, self._seq, self._work = {}, None, nx.Graph()

    def copy_from(self, graph: nx.Graph, documents: dict[str, dict[str, Any]], batch: int = 5000) -> None:
        """Write a whole networkx graph and registry (an embedded workdir's) into this graph."""
        with self.lock:
            self._documents = {k: dict(v) for k, v in documents.items()}
            nodes, edges = list(graph.nodes(data=True)), list(graph.edges)
            for start in range(0, len(nodes), batch):
                self._work = nx.Graph()
                self._work.add_nodes_from(nodes[start:start + batch])
                self.save(Change(list(self._work.nodes)))
            for start in range(0, len(edges), batch):
                self._work = graph
                self.save(Change([], edges[start:start + batch]))
            self._work = nx.Graph()
            self.save(Change(entries={"documents": list(self._documents)}))

    # -- writes -----------------------------------------------------------------------------
    def working_graph(self, chunk_ids: Iterable[str] = (), entity_ids: Iterable[str] = (),
                      edges: Iterable[tuple[str, str]] = ()) -> nx.Graph:
        """The given chunks (with their mentions, entities and listed relations), entities and
        relation edges, read from the server into a fresh graph that ``save`` sends back."""
        g = nx.Graph()
        entities, pairs = set(entity_ids), {(min(u, v), max(u, v)) for u, v in edges}
        mentions = []
        rows = self._q("UNWIND $ids AS i MATCH (c:Chunk {id: i}) OPTIONAL MATCH (e:Entity)-[m:MENTION]->(c) "
                       "RETURN c.id, properties(c), collect([e.id, properties(m)])", ids=sorted(set(chunk_ids)))
        for chunk_id, props, linked in rows:
            attrs = _decode(props, CHUNK)
            g.add_node(chunk_id, **attrs)
            pairs.update((min(u, v), max(u, v)) for u, v in attrs.get("relations", []))
            for entity_id, edge in linked:
                if entity_id is not None:
                    entities.add(entity_id)
                    mentions.append((entity_id, chunk_id, _decode(edge, MENTION)))
        relations = self._q("UNWIND $pairs AS p MATCH (a:Entity {id: p[0]})-[r:RELATION]->(b:Entity {id: p[1]}) "
                            "RETURN a.id, b.id, properties(r)", pairs=[list(p) for p in sorted(pairs)])
        entities.update(n for u, v, _ in relations for n in (u, v))
        for entity_id, props in self._q("UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e.id, properties(e)",
                                        ids=sorted(entities)):
            g.add_node(entity_id, **_decode(props, ENTITY))
        g.add_edges_from(mentions)
        g.add_edges_from((u, v, _decode(props, RELATION)) for u, v, props in relations)
        with self.lock:
            self._work = g
        return g

    def save(self, change: Change | None = None) -> None:
        """Send what ``change`` names from the last working graph (without one: all of it), in
        one MULTI/EXEC transaction: the server applies all of it or, if this process dies
        before the transaction is sent, none of it."""
        with self.lock:
            g = self._work
            nodes, pairs, docs = change_items(g, change, self._documents)
            writes: list[tuple[str, dict[str, Any]]] = []
            self._write_nodes(g, nodes, writes)
            self._write_edges(g, sorted(pairs), writes)
            records = [[d, json.dumps(self._documents[d], ensure_ascii=False, sort_keys=True)]
                       for d in docs if d in self._documents]
            if records:
                writes.append(("UNWIND $rows AS r MERGE (d:Doc {id: r[0]}) SET d.record = r[1]", {"rows": records}))
            gone = [d for d in docs if d not in self._documents]
            if gone:
                writes.append(("UNWIND $ids AS i MATCH (d:Doc {id: i}) DELETE d", {"ids": gone}))
            writes.append(("MERGE (m:Meta {id: 'meta'}) SET m.seq = coalesce(m.seq, 0) + 1 RETURN m.seq", {}))
            self._seq = int(self._transaction(writes)[-1][1][0][0])
            self._work = nx.Graph()

    def _transaction(self, writes: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Run the queries in one MULTI/EXEC; their raw replies (header, rows, statistics)."""
        pipe = self.db.connection.pipeline(transaction=True)
        for query, params in writes:
            header = self._graph._build_params_header(params) if params else ""
            pipe.execute_command("GRAPH.QUERY", self.name, header + query)
        return pipe.execute()

    @staticmethod
    def _write_nodes(g: nx.Graph, nodes: list[str], writes: list[tuple[str, dict[str, Any]]]) -> None:
        for kind, label in _LABEL.items():
            rows = [{"id": n, "props": {**_encode(g.nodes[n]), "id": n}} for n in nodes
                    if g.has_node(n) and g.nodes[n].get("kind") == kind]
            if rows:
                writes.append((f"UNWIND $rows AS r MERGE (n:{label} {{id: r.id}}) SET n = r.props", {"rows": rows}))
            gone = [n for n in nodes if not g.has_node(n)]
            if gone:
                writes.append((f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) DETACH DELETE n", {"ids": gone}))

    @staticmethod
    def _write_edges(g: nx.Graph, pairs: list[tuple[str, str]], writes: list[tuple[str, dict[str, Any]]]) -> None:
        relations, mentions, gone = [], [], []
        for u, v in pairs:
            if not g.has_edge(u, v):
                gone.extend([[u, v], [v, u]])
                continue
            attrs = g.edges[u, v]
            if attrs.get("kind") == RELATION:
                relations.append({"u": u, "v": v, "props": _encode(attrs)})
            else:
                entity, chunk = (u, v) if g.nodes[v].get("kind") == CHUNK else (v, u)
                subject = entity in g.nodes[chunk].get("subjects", ())
                mentions.append({"u": entity, "v": chunk, "props": {**_encode(attrs), "subject": subject}})
        if gone:
            writes.append(("UNWIND $pairs AS p MATCH (a:Entity {id: p[0]})-[r]-(b) WHERE b.id = p[1] DELETE r",
                           {"pairs": gone}))
        if relations:
            writes.append(("UNWIND $rows AS r MATCH (a:Entity {id: r.u}) MATCH (b:Entity {id: r.v}) "
                           "MERGE (a)-[e:RELATION]->(b) SET e = r.props", {"rows": relations}))
        if mentions:
            writes.append(("UNWIND $rows AS r MATCH (a:Entity {id: r.u}) MATCH (c:Chunk {id: r.v}) "
                           "MERGE (a)-[e:MENTION]->(c) SET e = r.props", {"rows": mentions}))

    # -- GraphView ----------------------------------------------------------------------------
    def entity(self, entity_id: str) -> dict[str, Any] | None:
        rows = self._q("MATCH (e:Entity {id: $id}) OPTIONAL MATCH (e)-[:MENTION]->(c:Chunk) "
                       "RETURN e.name, e.type, e.description, collect(c.id)", id=entity_id)
        if not rows:
            return None
        name, type_, description, source_chunks = rows[0]
        return {"name": name, "type": type_, "description": description or "",
                "source_chunks": sorted(source_chunks or [])}

    def entity_subgraph(self, seeds: Iterable[str], hops: int, max_nodes: int,
                        max_neighbors: int | None = None) -> nx.Graph:
        """Breadth-first from the seeds, one server query per hop; each node contributes at
        most its ``max_neighbors`` strongest new relations (as ``NetworkXGraphStore`` does)."""
        cap = self.max_neighbors if max_neighbors is None else max_neighbors
        wanted = list(dict.fromkeys(seeds))
        found = {i: (name, type_) for i, name, type_ in self._q(
            "UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e.id, e.name, e.type", ids=wanted)}
        depth = {s: 0 for s in wanted if s in found}
        frontier, level = list(depth), 0
        while frontier and level < hops and len(depth) < max_nodes:
            # a node skips at most max_nodes neighbours already reached, so its cap + max_nodes
            # strongest are enough (filtering reached ones on the server is slower)
            rows = self._q("UNWIND $frontier AS f MATCH (a:Entity {id: f})-[r:RELATION]-(b:Entity) "
                           "WITH f, b, r ORDER BY r.weight DESC, b.id "
                           "WITH f, collect([b.id, r.weight, b.name, b.type])[..$limit] AS near RETURN f, near",
                           frontier=frontier, limit=cap + max_nodes)
            nearest = {f: sorted(near, key=lambda x: (-x[1], x[0])) for f, near in rows}
            level, next_frontier = level + 1, []
            for node in frontier:
                added = 0
                for neighbour, _, name, type_ in nearest.get(node, ()):
                    if added >= cap or len(depth) >= max_nodes:
                        break
                    if neighbour in depth:
                        continue
                    depth[neighbour], found[neighbour] = level, (name, type_)
                    next_frontier.append(neighbour)
                    added += 1
            frontier = next_frontier
        sub = nx.Graph()
        sub.add_nodes_from((n, {"name": found[n][0], "type": found[n][1], "hop": d}) for n, d in depth.items())
        order = {n: i for i, n in enumerate(depth)}
        rows = self._q("MATCH (a:Entity)-[r:RELATION]->(b:Entity) WHERE a.id IN $ids AND b.id IN $ids "
                       "RETURN a.id, b.id, r.weight, r.description, r.keywords", ids=list(depth))
        rows.sort(key=lambda r: (order[r[0]], order[r[1]]))
        sub.add_edges_from((u, v, {"weight": w, "description": d or "", "keywords": k or ""}) for u, v, w, d, k in rows)
        return sub

    def chunk_links(self, entity_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        links: dict[str, dict[str, str]] = {}
        for entity_id, chunk_id, description in self._q(
                "UNWIND $ids AS i MATCH (e:Entity {id: i}) OPTIONAL MATCH (e)-[m:MENTION]->(c:Chunk) "
                "RETURN e.id, c.id, m.description ORDER BY e.id, c.id", ids=list(dict.fromkeys(entity_ids))):
            found = links.setdefault(entity_id, {})
            if chunk_id is not None:
                found[chunk_id] = description or ""
        return links

    def entity_chunk_ids(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for entity_id, chunk_id in self._q(
                "UNWIND $ids AS i MATCH (e:Entity {id: i}) OPTIONAL MATCH (e)-[:MENTION]->(c:Chunk) "
                "RETURN e.id, c.id ORDER BY e.id, c.id", ids=list(dict.fromkeys(entity_ids))):
            chunks = found.setdefault(entity_id, [])
            if chunk_id is not None:
                chunks.append(chunk_id)
        return found

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        rows = self._q("UNWIND $ids AS i MATCH (c:Chunk {id: i}) RETURN c.id, c.text, c.doc_id, c.order, c.n_tokens, "
                       "c.subjects, c.start_index, c.end_index, c.heading_path", ids=list(chunk_ids))
        return {c: {"text": text, "doc_id": doc_id, "order": order, "n_tokens": n_tokens, "subjects": list(subjects or []),
                    "start_index": start, "end_index": end, "heading_path": list(path or [])}
                for c, text, doc_id, order, n_tokens, subjects, start, end, path in rows}

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        rows = self._q("UNWIND $ids AS i MATCH (c:Chunk {id: i}) OPTIONAL MATCH (e:Entity)-[:MENTION]->(c) "
                       "RETURN c.id, collect(e.id)", ids=list(chunk_ids))
        return {c: sorted(e for e in found if e is not None) for c, found in rows}

    def chunk_relations(self, chunk_ids: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        """The relation edges each chunk states."""
        rows = self._q("UNWIND $ids AS i MATCH (c:Chunk {id: i}) RETURN c.id, c.relations_json", ids=list(chunk_ids))
        return {c: [(u, v) for u, v in json.loads(pairs or "[]")] for c, pairs in rows}

    def subject_chunks(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        rows = self._q("UNWIND $ids AS i MATCH (e:Entity {id: i})-[m:MENTION]->(c:Chunk) WHERE m.subject "
                       "RETURN e.id, collect(c.id)", ids=list(entity_ids))
        return {e: sorted(found) for e, found in rows if found}

    def chunk_ids(self) -> list[str]:
        return sorted(row[0] for row in self._q("MATCH (c:Chunk) RETURN c.id"))

    def count_chunks(self) -> int:
        return int(self._q("MATCH (c:Chunk) RETURN count(c)")[0][0])

    def entity_ids(self) -> list[str]:
        return sorted(row[0] for row in self._q("MATCH (e:Entity) RETURN e.id"))

    def relation_keywords(self) -> dict[tuple[str, str], str]:
        return {(u, v): k or "" for u, v, k in self._q("MATCH (a:Entity)-[r:RELATION]->(b:Entity) "
                                                        "RETURN a.id, b.id, r.keywords")}

    def relation_edges(self) -> list[tuple[str, str]]:
        return sorted(self.relation_keywords())

    def type_pool(self, examples_per_type: int = 3) -> dict[str, list[str]]:
        """As ``NetworkXGraphStore.type_pool``, but examples of equal degree come in name order
        (the server keeps no insertion order)."""
        return rank_type_pool(self._q("MATCH (e:Entity) RETURN e.type, e.name, size((e)--()) ORDER BY e.name"),
                              examples_per_type)

    def stats(self) -> dict[str, int]:
        count = lambda q: int(self._q(q)[0][0])  # noqa: E731
        return {"chunks": self.count_chunks(),
                "entities": count("MATCH (e:Entity) RETURN count(e)"),
                "relations": count("MATCH (:Entity)-[r:RELATION]->(:Entity) RETURN count(r)"),
                "mentions": count("MATCH (:Entity)-[r:MENTION]->(:Chunk) RETURN count(r)")}
