"""Sec. 3.1, eq. 1: the semantic-aware heterogeneous graph and how chunks add to and leave it.

Nodes are entity nodes (id = normalised name) and chunk nodes (id = chunk id). Edges are
entity-entity relations (E_alpha) and entity-chunk mentions (E_beta, carrying the entity's
description in that chunk). Every merged attribute is kept per source chunk, so removing a
chunk removes exactly what it contributed and the result equals a build without it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

import networkx as nx

from .names import clean_display_name, normalize_entity_name
from .types import Chunk, ExtractionResult

ENTITY, CHUNK = "entity", "chunk"
RELATION, MENTION = "relation", "mention"
DESCRIPTION_SEPARATOR = " | "
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$", re.IGNORECASE)


def entity_name(name: str, type_: str) -> str:
    """An extracted entity's name, without a possessive for a person ("Ada's" -> "Ada")."""
    return _POSSESSIVE.sub("", name.strip()) if type_.strip().upper() == "PERSON" else name


def merged_entity_view(sources: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Derive an entity's display name, type and description from its per-chunk records
    (the name as the records under the node's own id give it, not an alias homed there)."""
    ordered = [sources[c] for c in sorted(sources)]
    names = Counter(s["name"] for s in ordered if "raw" not in s) or Counter(s["name"] for s in ordered)
    types = Counter(s["type"] for s in ordered if s["type"])
    descriptions = list(dict.fromkeys(s["description"] for s in ordered if s["description"]))
    return {
        "name": min(names, key=lambda n: (-names[n], n)),
        "type": min(types, key=lambda t: (-types[t], t)) if types else "UNKNOWN",
        "description": DESCRIPTION_SEPARATOR.join(descriptions),
        "source_chunks": sorted(sources),
    }


def merged_relation_view(sources: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Derive an edge's weight (sum over mentions), description and keywords."""
    ordered = [sources[c] for c in sorted(sources)]
    keywords = sorted({k.strip() for s in ordered for k in s["keywords"].split(",") if k.strip()})
    return {
        "weight": float(sum(s["weight"] for s in ordered)),
        "description": DESCRIPTION_SEPARATOR.join(dict.fromkeys(s["description"] for s in ordered if s["description"])),
        "keywords": ", ".join(keywords),
        "source_chunks": sorted(sources),
    }


MERGED_FIELDS = {ENTITY: ("name", "type", "description", "source_chunks"),
                 RELATION: ("weight", "description", "keywords", "source_chunks")}


def add_sources(attrs: dict[str, Any], sources: dict[str, dict[str, Any]]) -> None:
    """Add per-chunk records to an entity's or relation's ``sources`` and derive its merged
    attributes again (what ``add_chunk`` does, for a log replaying only the new records)."""
    attrs.setdefault("sources", {}).update(sources)
    merge = merged_entity_view if attrs.get("kind") == ENTITY else merged_relation_view
    attrs.update(merge(attrs["sources"]))


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


def add_chunk(graph: nx.Graph, chunk: Chunk, extraction: ExtractionResult) -> None:
    """Add a chunk node, its entities, their mentions and the chunk's relations."""
    graph.add_node(chunk.id, kind=CHUNK, doc_id=chunk.doc_id, order=chunk.order,
                   text=chunk.text, n_tokens=chunk.n_tokens, relations=[], subjects=[])
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
        if not graph.has_node(node_id):
            graph.add_node(node_id, kind=ENTITY, sources={})
        node = graph.nodes[node_id]
        node["sources"][chunk.id] = record
        node.update(merged_entity_view(node["sources"]))
        graph.add_edge(node_id, chunk.id, kind=MENTION, description=record["description"])
    for (source, target), record in per_relation.items():
        if not graph.has_edge(source, target):
            graph.add_edge(source, target, kind=RELATION, sources={})
        edge = graph.edges[source, target]
        edge["sources"][chunk.id] = record
        edge.update(merged_relation_view(edge["sources"]))
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
            if not graph.has_edge(source, target):
                continue
            edge = graph.edges[source, target]
            edge["sources"].pop(chunk_id, None)
            touched_edges.add((source, target))
            if edge["sources"]:
                edge.update(merged_relation_view(edge["sources"]))
            else:
                graph.remove_edge(source, target)
        for entity_id in [n for n in graph.neighbors(chunk_id) if graph.nodes[n].get("kind") == ENTITY]:
            node = graph.nodes[entity_id]
            node["sources"].pop(chunk_id, None)
            touched_entities.add(entity_id)
            if node["sources"]:
                node.update(merged_entity_view(node["sources"]))
        graph.remove_node(chunk_id)
    for entity_id in touched_entities:
        if graph.has_node(entity_id) and not graph.nodes[entity_id]["sources"]:
            for neighbour in list(graph.neighbors(entity_id)):
                touched_edges.add((min(entity_id, neighbour), max(entity_id, neighbour)))
            graph.remove_node(entity_id)
    return touched_entities, touched_edges


def is_entity(graph: nx.Graph, node_id: str) -> bool:
    return graph.nodes[node_id].get("kind") == ENTITY
