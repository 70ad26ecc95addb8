"""Sec. 3.1, eq. 1: the semantic-aware heterogeneous graph and how chunks add to and leave it.

Nodes are entity nodes (id = normalised name) and chunk nodes (id = chunk id). Edges are
entity-entity relations (E_alpha) and entity-chunk mentions (E_beta, carrying the entity's
description in that chunk). Every merged attribute is kept per source chunk (``graph_records``),
so removing a chunk removes exactly what it contributed and the result equals a build without it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import networkx as nx

from minirag_core.graph.records import (CHUNK_LOADER, DESCRIPTION_SEPARATOR, ENTITY, ITEM_LOADER, PARTIAL, RELATION,
                            SOURCE_LOADER, add_record, complete_sources, drop_record, empty_tally, new_item,
                            record_count)
from minirag_core.graph.names import clean_display_name, normalize_entity_name
from minirag_core.types import HEADING_PATH_KEY, Chunk, ExtractionResult

CHUNK, MENTION = "chunk", "mention"
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$", re.IGNORECASE)


def entity_name(name: str, type_: str) -> str:
    """An extracted entity's name, without a possessive for a person ("Ada's" -> "Ada")."""
    return _POSSESSIVE.sub("", name.strip()) if type_.strip().upper() == "PERSON" else name


def item_loader(graph: nx.Graph, kind: str, key: Any) -> Callable[[], None] | None:
    """What completes a partial item of ``graph`` (its store's ``source_loader``), if any."""
    load = graph.graph.get(SOURCE_LOADER)
    if load is None:
        return None
    attrs = graph.nodes[key] if kind == ENTITY else graph.edges[key]
    return lambda: complete_sources(attrs, load(kind, key))


def complete_item(graph: nx.Graph, kind: str, key: Any) -> dict[str, Any]:
    """An entity's or relation's attributes with every record loaded."""
    attrs = graph.nodes[key] if kind == ENTITY else graph.edges[key]
    if PARTIAL in attrs:
        loader = item_loader(graph, kind, key)
        if loader is None:
            raise RuntimeError(f"{key!r} holds only some of its records and its graph has no loader")
        loader()
    return attrs


def _stored_or_new(graph: nx.Graph, kind: str, key: Any) -> dict[str, Any]:
    """An item the working graph lacks: as its store holds it (a record may join an entity or
    relation the write did not load, as when alias consolidation re-homes one), else new."""
    load = graph.graph.get(ITEM_LOADER)
    stored = load(kind, key) if load is not None else None
    return stored if stored is not None else new_item(kind)


def ensure_chunks(graph: nx.Graph, chunk_ids: Iterable[str]) -> None:
    """Load the given chunks into a working graph that lacks them (its store's ``chunk_loader``)."""
    missing = sorted({c for c in chunk_ids if not graph.has_node(c)})
    load = graph.graph.get(CHUNK_LOADER)
    if missing and load is not None:
        load(missing)


def add_entity_record(graph: nx.Graph, node_id: str, chunk_id: str, record: dict[str, Any]) -> None:
    if not graph.has_node(node_id):
        graph.add_node(node_id, **_stored_or_new(graph, ENTITY, node_id))
    add_record(graph.nodes[node_id], chunk_id, record, item_loader(graph, ENTITY, node_id))


def drop_entity_record(graph: nx.Graph, node_id: str, chunk_id: str) -> dict[str, Any]:
    return drop_record(graph.nodes[node_id], chunk_id, item_loader(graph, ENTITY, node_id))


def add_relation_record(graph: nx.Graph, edge: tuple[str, str], chunk_id: str, record: dict[str, Any]) -> None:
    if not graph.has_edge(*edge):
        graph.add_edge(*edge, **_stored_or_new(graph, RELATION, (min(edge), max(edge))))
    add_record(graph.edges[edge], chunk_id, record, item_loader(graph, RELATION, edge))


def drop_relation_record(graph: nx.Graph, edge: tuple[str, str], chunk_id: str) -> dict[str, Any]:
    """Remove one chunk's record of a relation; the edge goes with its last record."""
    record = drop_record(graph.edges[edge], chunk_id, item_loader(graph, RELATION, edge))
    if record_count(graph.edges[edge]) == 0:
        graph.remove_edge(*edge)
    return record


def add_sources(attrs: dict[str, Any], sources: dict[str, dict[str, Any]]) -> None:
    """Add per-chunk records to a complete entity or relation (what ``add_chunk`` does, for a
    log replaying only the new records)."""
    attrs.setdefault("sources", {})
    attrs.setdefault("tally", empty_tally(attrs["kind"]))
    for chunk_id in sorted(sources):
        add_record(attrs, chunk_id, sources[chunk_id])


#: the attributes derived from an item's records
MERGED_FIELDS = {ENTITY: ("name", "type", "description", "tally"),
                 RELATION: ("weight", "description", "keywords", "tally")}


def extraction_ids(extraction: ExtractionResult) -> tuple[set[str], set[tuple[str, str]]]:
    """The entity ids and relation edges ``add_chunk`` reads and changes for ``extraction``."""
    ids = {normalize_entity_name(e.name): normalize_entity_name(entity_name(e.name, e.type))
           for e in extraction.entities}
    entities = {n for n in ids.values() if n}
    edges: set[tuple[str, str]] = set()
    for relation in extraction.relations:
        source, target = (ids.get(n, n) for n in map(normalize_entity_name, (relation.source, relation.target)))
        if source and target and source != target:
            entities.update((source, target))
            edges.add((min(source, target), max(source, target)))
    return entities, edges


def citation(chunk: Chunk) -> dict[str, Any]:
    """What a chunk node keeps to be cited: its offsets in the document and heading path, where known."""
    found = {"start_index": chunk.start_index, "end_index": chunk.end_index,
             "heading_path": [str(p) for p in chunk.metadata.get(HEADING_PATH_KEY) or []]}
    return {k: v for k, v in found.items() if v not in (None, [])}


def citation_fields(attrs: dict[str, Any]) -> dict[str, Any]:
    """A stored chunk's offsets and heading path (None and [] where the chunk node has none)."""
    return {"start_index": attrs.get("start_index"), "end_index": attrs.get("end_index"),
            "heading_path": list(attrs.get("heading_path") or [])}


def add_chunk(graph: nx.Graph, chunk: Chunk, extraction: ExtractionResult) -> None:
    """Add a chunk node, its entities, their mentions and the chunk's relations."""
    graph.add_node(chunk.id, kind=CHUNK, doc_id=chunk.doc_id, order=chunk.order,
                   text=chunk.text, n_tokens=chunk.n_tokens, relations=[], subjects=[], **citation(chunk))
    per_entity: dict[str, dict[str, str]] = {}
    names = {normalize_entity_name(e.name): entity_name(e.name, e.type) for e in extraction.entities}
    ids = {raw: normalize_entity_name(name) for raw, name in names.items()}
    for entity in extraction.entities:
        name = names[normalize_entity_name(entity.name)]
        node_id = normalize_entity_name(name)
        if not node_id:
            continue
        record = per_entity.setdefault(node_id, {"name": clean_display_name(name),
                                                 "type": entity.type.strip().upper(), "description": ""})
        if entity.description and entity.description not in record["description"]:
            record["description"] = (record["description"] + DESCRIPTION_SEPARATOR + entity.description
                                      if record["description"] else entity.description)
    per_relation: dict[tuple[str, str], dict[str, Any]] = {}
    for relation in extraction.relations:
        source, target = (ids.get(n, n) for n in map(normalize_entity_name, (relation.source, relation.target)))
        if not source or not target or source == target:
            continue
        for node_id, raw in ((source, relation.source), (target, relation.target)):
            per_entity.setdefault(node_id, {"name": clean_display_name(raw), "type": "", "description": ""})
        key = (min(source, target), max(source, target))
        record = per_relation.setdefault(key, {"description": "", "keywords": "", "weight": 0.0})
        record["weight"] += float(relation.weight)
        if relation.description and relation.description not in record["description"]:
            record["description"] = (record["description"] + DESCRIPTION_SEPARATOR + relation.description
                                     if record["description"] else relation.description)
        record["keywords"] = ", ".join(filter(None, [record["keywords"], relation.keywords]))
    for node_id, record in per_entity.items():
        add_entity_record(graph, node_id, chunk.id, record)
        graph.add_edge(node_id, chunk.id, kind=MENTION, description=record["description"])
    for (source, target), record in per_relation.items():
        add_relation_record(graph, (source, target), chunk.id, record)
        graph.nodes[chunk.id]["relations"].append([source, target])
    subjects = dict.fromkeys(ids.get(n, n) for n in map(normalize_entity_name, extraction.subject_entities))
    graph.nodes[chunk.id]["subjects"] = sorted(s for s in subjects if s and graph.has_edge(s, chunk.id))


def remove_chunks(graph: nx.Graph, chunk_ids: Iterable[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """Remove chunks and everything they contributed.

    Returns the entity ids and relation edges that were changed or removed, so the vector
    store can be brought in line.
    """
    touched_entities: set[str] = set()
    touched_edges: set[tuple[str, str]] = set()
    for chunk_id in chunk_ids:
        if not graph.has_node(chunk_id):
            continue
        for source, target in graph.nodes[chunk_id].get("relations", []):
            if graph.has_edge(source, target) and chunk_id in graph.edges[source, target]["sources"]:
                drop_relation_record(graph, (source, target), chunk_id)
                touched_edges.add((source, target))
        for entity_id in [n for n in graph.neighbors(chunk_id) if graph.nodes[n].get("kind") == ENTITY]:
            if chunk_id in graph.nodes[entity_id]["sources"]:
                drop_entity_record(graph, entity_id, chunk_id)
            touched_entities.add(entity_id)
        graph.remove_node(chunk_id)
    for entity_id in touched_entities:
        if graph.has_node(entity_id) and record_count(graph.nodes[entity_id]) == 0:
            for neighbour in list(graph.neighbors(entity_id)):
                touched_edges.add((min(entity_id, neighbour), max(entity_id, neighbour)))
            graph.remove_node(entity_id)
    return touched_entities, touched_edges
