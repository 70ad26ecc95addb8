"""Keeping a ``VectorIndex`` in line with the graph: what each graph item embeds as, the
incremental sync after a write, and the repair after a crash between the two writes."""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

import networkx as nx

from minirag_core.storage.base import GraphStore
from minirag_core.search.vectors import (CHUNKS, ENTITIES, RELATIONS, WINDOWS, VectorIndex, chunk_ranking_text,
                      relation_has_meaning, relation_vector_id, relation_vector_text, window_owner)


def text_hash(text: str) -> str:
    """Short digest of an embedded text, kept on the graph item to skip unchanged re-embeds."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def chunk_vector_text(g: nx.Graph, chunk_id: str) -> str:
    """What a chunk is embedded as: its text plus its entity-chunk descriptions."""
    descriptions = [g.edges[chunk_id, n].get("description", "") for n in sorted(g.neighbors(chunk_id))]
    return chunk_ranking_text(g.nodes[chunk_id]["text"], descriptions)


def relation_text(g: nx.Graph, u: str, v: str) -> str:
    """What the relation edge ``(u, v)`` is embedded as."""
    edge = g.edges[u, v]
    return relation_vector_text(g.nodes[u]["name"], g.nodes[v]["name"], edge["keywords"], edge["description"])


def vector_relations(graph_store: GraphStore) -> list[tuple[str, str]]:
    """The relation edges that get a vector (those saying more than co-occurrence), sorted."""
    return sorted(e for e, keywords in graph_store.relation_keywords().items() if relation_has_meaning(keywords))


def relations_with_vectors(graph_store: GraphStore) -> dict[str, tuple[str, str]]:
    """Relation vector id -> edge, for every relation that gets a vector."""
    return {relation_vector_id(u, v): (u, v) for u, v in vector_relations(graph_store)}


def _upsert(vectors: VectorIndex, collection: str, items: list[tuple[str, str, dict[str, Any]]]) -> None:
    vectors.upsert(collection, [i[0] for i in items], [i[1] for i in items], [i[2] for i in items])


def sync_vectors(g: nx.Graph, vectors: VectorIndex, entities: Iterable[str], edges: Iterable[tuple[str, str]],
                 chunk_ids: Iterable[str], *, index_relations: bool) -> None:
    """Bring the vectors of the given graph items in line with the graph."""
    entities, edges = set(entities), set(edges)
    vectors.delete(ENTITIES, [e for e in entities if not g.has_node(e)])
    upsert: list[tuple[str, str, dict[str, Any]]] = []
    for entity_id in sorted(e for e in entities if g.has_node(e)):
        node = g.nodes[entity_id]
        text = node["name"]
        if node.get("vector_hash") != text_hash(text):
            upsert.append((entity_id, text, {"type": node["type"]}))
            node["vector_hash"] = text_hash(text)
    _upsert(vectors, ENTITIES, upsert)
    if index_relations:
        # gone, or without meaning now but embedded before (its hash says so); a co-occurrence
        # edge that never had a vector is not looked up in the store (after a crash, repair
        # removes any vector the graph does not expect)
        dead = [relation_vector_id(u, v) for u, v in edges
                if not g.has_edge(u, v) or ("vector_hash" in g.edges[u, v]
                                            and not relation_has_meaning(g.edges[u, v]["keywords"]))]
        vectors.delete(RELATIONS, dead)
        upsert = []
        for u, v in sorted(e for e in edges if g.has_edge(*e)):
            edge = g.edges[u, v]
            if not relation_has_meaning(edge["keywords"]):
                edge.pop("vector_hash", None)
                continue
            text = relation_text(g, u, v)
            if edge.get("vector_hash") != text_hash(text):
                upsert.append((relation_vector_id(u, v), text, {"source": u, "target": v}))
                edge["vector_hash"] = text_hash(text)
        _upsert(vectors, RELATIONS, upsert)
    chunks = [(c, chunk_vector_text(g, c), {"doc_id": g.nodes[c]["doc_id"]}) for c in sorted(chunk_ids)]
    stored = vectors.stored_texts(CHUNKS, [c for c, _, _ in chunks])  # a chunk an alias move left as it was
    _upsert(vectors, CHUNKS, [item for item in chunks if stored.get(item[0]) != item[1]])  # keeps its vectors


def reembed_changed_chunks(graph_store: GraphStore, vectors: VectorIndex, batch: int = 512) -> int:
    """Embed again every chunk whose stored vector text differs from the text it is embedded as
    now (after the ranking text changed: ``indexing/manifest.py``); the number re-embedded. A
    store that keeps no texts has every chunk re-embedded. The caller holds the write locks."""
    ids = graph_store.chunk_ids()
    changed = 0
    for start in range(0, len(ids), batch):
        part = ids[start:start + batch]
        g = graph_store.working_graph(part)
        stored = vectors.stored_texts(CHUNKS, part)
        items = [(c, text, {"doc_id": g.nodes[c]["doc_id"]}) for c in part
                 if stored.get(c) != (text := chunk_vector_text(g, c))]
        vectors.delete_windows([c for c, _, _ in items])  # the new text may need fewer windows
        _upsert(vectors, CHUNKS, items)
        changed += len(items)
    return changed


def expected_vector_ids(graph_store: GraphStore, *, index_relations: bool) -> dict[str, set[str]]:
    """The ids each collection must hold to agree with the graph."""
    expected = {CHUNKS: set(graph_store.chunk_ids()), ENTITIES: set(graph_store.entity_ids())}
    if index_relations:
        expected[RELATIONS] = set(relations_with_vectors(graph_store))
    return expected


def repair_vectors(graph_store: GraphStore, vectors: VectorIndex, *, index_relations: bool) -> dict[str, int]:
    """Delete vectors the graph no longer has and add the ones it lacks; counts per collection.
    The caller holds the write lock and saves the graph if anything was fixed."""
    fixed: dict[str, int] = {}
    wanted_relations = relations_with_vectors(graph_store)
    plans = [(CHUNKS, set(graph_store.chunk_ids())), (ENTITIES, set(graph_store.entity_ids()))]
    if index_relations:
        plans.append((RELATIONS, set(wanted_relations)))
    missing: dict[str, set[str]] = {}
    for collection, wanted in plans:
        present = vectors.store.ids(collection)
        extra = sorted(present - wanted)
        vectors.delete(collection, extra)
        missing[collection] = wanted - present
        fixed[f"{collection}_removed"] = len(extra)
        fixed[f"{collection}_added"] = len(missing[collection])
    chunks = plans[0][1]
    orphans = sorted(w for w in vectors.window_ids() if window_owner(w) not in chunks)
    vectors.delete(WINDOWS, orphans)
    fixed[f"{WINDOWS}_removed"] = len(orphans)
    g = graph_store.working_graph(missing[CHUNKS], missing[ENTITIES],
                                  [wanted_relations[r] for r in missing.get(RELATIONS, ())])
    for entity_id in missing[ENTITIES]:
        g.nodes[entity_id].pop("vector_hash", None)
    for rel_id in missing.get(RELATIONS, ()):
        g.edges[wanted_relations[rel_id]].pop("vector_hash", None)
    sync_vectors(g, vectors, missing[ENTITIES], {wanted_relations[r] for r in missing.get(RELATIONS, ())},
                 missing[CHUNKS], index_relations=index_relations)
    return fixed
