"""The heterogeneous graph as a file other tools open: GraphML (Gephi, yEd, Cytoscape,
``networkx.read_graphml``) or node-link JSON (``networkx.node_link_graph``, d3).

Nodes are chunks (``kind="chunk"``: document id, order, text, token count, character offsets
and heading path where known) and entities (``kind="entity"``: name, type, merged description,
``weight`` = how many chunks mention it). Edges are entity-entity relations (``kind="relation"``:
description, keywords, summed weight) and entity-chunk mentions (``kind="mention"``: the
entity's description in that chunk). Every node has a ``label`` for display. GraphML holds
scalars only: a list (the heading path) is joined with :data:`PATH_SEPARATOR`, a missing value is
left out; JSON keeps lists and leaves missing values out too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx

from minirag_core.graph.heterogeneous import CHUNK, MENTION
from minirag_core.graph.records import ENTITY, RELATION

FORMATS = ("graphml", "json")
#: how GraphML joins a heading path into one string
PATH_SEPARATOR = " > "
#: the chunk attributes exported (the rest are the index's own bookkeeping)
CHUNK_FIELDS = ("doc_id", "order", "text", "n_tokens", "start_index", "end_index", "heading_path")
ENTITY_FIELDS = ("name", "type", "description")
RELATION_FIELDS = ("description", "keywords", "weight")


def _kept(attrs: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {f: attrs[f] for f in fields if attrs.get(f) is not None}


def export_view(graph: nx.Graph) -> nx.Graph:
    """The exported form of a whole graph (as ``storage.graph_stores.whole_graph`` reads it):
    chunk and entity nodes, relation and mention edges, with the attributes above."""
    out = nx.Graph()
    for node, attrs in graph.nodes(data=True):
        kind = attrs.get("kind")
        if kind == CHUNK:
            kept = _kept(attrs, CHUNK_FIELDS)
            out.add_node(node, kind=CHUNK, label=f"{attrs.get('doc_id', '')} #{attrs.get('order', 0)}", **kept)
        elif kind == ENTITY:
            chunks = sum(1 for n in graph.neighbors(node) if graph.nodes[n].get("kind") == CHUNK)
            kept = _kept(attrs, ENTITY_FIELDS)
            out.add_node(node, kind=ENTITY, label=str(attrs.get("name") or node), weight=float(chunks), **kept)
    for u, v, attrs in graph.edges(data=True):
        if u not in out or v not in out:
            continue
        if attrs.get("kind") == RELATION:
            kept = _kept(attrs, RELATION_FIELDS)
            kept["weight"] = float(kept.get("weight", 0.0))
            out.add_edge(u, v, kind=RELATION, **kept)
        else:
            out.add_edge(u, v, kind=MENTION, description=str(attrs.get("description") or ""))
    return out


def _scalars(attrs: dict[str, Any]) -> None:
    for key, value in list(attrs.items()):
        if isinstance(value, (list, tuple)):
            attrs[key] = PATH_SEPARATOR.join(str(v) for v in value)
        elif not isinstance(value, (str, int, float, bool)):
            attrs[key] = json.dumps(value, ensure_ascii=False, sort_keys=True)


def write_graph(graph: nx.Graph, path: str | Path, format: str = "graphml") -> Path:
    """Write ``export_view(graph)`` to ``path`` as ``graphml`` or ``json`` (node-link, edges
    under ``"edges"``); returns the path."""
    if format not in FORMATS:
        raise ValueError(f"export format {format!r}: expected one of {', '.join(FORMATS)}")
    view = export_view(graph)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if format == "graphml":
        for _, attrs in view.nodes(data=True):
            _scalars(attrs)
        for _, _, attrs in view.edges(data=True):
            _scalars(attrs)
        nx.write_graphml(view, target, encoding="utf-8", named_key_ids=True)
    else:
        data = nx.node_link_data(view, edges="edges")
        target.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return target

