"""Pictures of *why* MiniRAG retrieved what it did: the query's reasoning subgraph.

PNG through networkx + matplotlib (static, for READMEs and notebooks); HTML through pyvis
(interactive, with its JavaScript inlined so the file opens offline).
"""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx

from minirag_core.storage.base import GraphView
from minirag_core.types import RetrievalResult

SUFFIXES = (".png", ".html")
LABEL_CHARS = 28
COLOURS = {"seed": "#2ca02c", "answer": "#ff7f0e", "path": "#9e9e9e", "chunk": "#1f77b4", "cluster": "#9467bd"}


def reasoning_subgraph(result: RetrievalResult, graph: GraphView, max_paths: int = 8) -> nx.Graph:
    """Seeds, answer candidates and path entities, the chosen chunks, and the edges between them."""
    sub = nx.Graph()
    paths = result.ranked_paths()[:max_paths]
    path_edges = {tuple(sorted(e)) for p in paths for e in zip(p.nodes, p.nodes[1:])}
    key_edges = {tuple(sorted((k.source, k.target))): k.score for k in result.key_edges}
    entities = {n for p in paths for n in p.nodes} | set(result.seeds)
    for entity_id in sorted(entities):
        attrs = graph.entity(entity_id) or {"name": entity_id, "type": ""}
        role = "seed" if entity_id in result.seeds else "answer" if entity_id in result.answer_candidates else "path"
        sub.add_node(entity_id, label=_short(attrs["name"]), role=role, title=f"{attrs['name']} ({attrs['type']})")
    for u, v in sorted(path_edges):
        sub.add_edge(u, v, on_path=True, key_score=key_edges.get((u, v), 0.0))
    links = graph.chunk_links(sorted(entities))
    for rank, chunk in enumerate(result.chunks, 1):
        node = f"chunk:{chunk.chunk_id}"
        sub.add_node(node, label=f"#{rank} {_short_end(chunk.doc_id)}", role="chunk", title=chunk.text[:300])
        for entity_id, chunks in links.items():
            if chunk.chunk_id in chunks:
                sub.add_edge(entity_id, node, on_path=False, key_score=0.0)
    aggregated = result.aggregated
    for cluster in aggregated.clusters if aggregated is not None else []:  # LeanRAG's summary nodes
        node = f"cluster:{cluster.id}"
        sub.add_node(node, label=_short(f"L{cluster.level}: {' / '.join(cluster.entities[:2])}"), role="cluster",
                     title=cluster.summary)
        for entity_id in sorted(entities & set(cluster.entity_ids)):
            sub.add_edge(entity_id, node, on_path=False, key_score=0.0)
    # an entity that reaches neither a path nor a chosen chunk explains nothing in the picture
    sub.remove_nodes_from([n for n in list(sub) if sub.degree(n) == 0 and not n.startswith("chunk:")])
    return sub


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def _short_end(doc_id: str) -> str:
    """A document id kept by its end (a page path's file name tells it apart, its folders less)."""
    return doc_id if len(doc_id) <= LABEL_CHARS else "…" + doc_id[-(LABEL_CHARS - 1):]


def draw_reasoning_subgraph(result: RetrievalResult, graph: GraphView, out: Path) -> Path:
    """Write the picture to ``out`` (.png or .html) and return its path."""
    sub = reasoning_subgraph(result, graph)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".html":
        return _draw_html(sub, out)
    if out.suffix.lower() != ".png":
        raise ValueError(f"explain writes {' or '.join(SUFFIXES)} files, not {out.suffix or 'no suffix'}")
    return _draw_png(sub, result.query, out)


def _draw_png(sub: nx.Graph, title: str, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 8))
    # Kamada-Kawai spreads labelled nodes more evenly than a spring layout (fewer overlaps)
    pos = nx.kamada_kawai_layout(sub) if len(sub) > 2 else nx.spring_layout(sub, seed=7)
    roles = nx.get_node_attributes(sub, "role")
    for role, colour in COLOURS.items():
        nodes = [n for n in sub if roles.get(n) == role]
        nx.draw_networkx_nodes(sub, pos, nodelist=nodes, node_color=colour, ax=ax,
                               node_shape="s" if role == "chunk" else "o", node_size=500 if role != "path" else 300,
                               label={"seed": "seed entity", "answer": "answer candidate",
                                      "path": "path entity", "chunk": "retrieved chunk",
                                      "cluster": "cluster (summary node)"}[role])
    on_path = [(u, v) for u, v, d in sub.edges(data=True) if d["on_path"]]
    keyed = [(u, v) for u, v, d in sub.edges(data=True) if d["on_path"] and d["key_score"] > 0]
    nx.draw_networkx_edges(sub, pos, edgelist=[e for e in sub.edges if e not in on_path], style="dotted",
                           edge_color="#1f77b4", ax=ax)
    nx.draw_networkx_edges(sub, pos, edgelist=on_path, edge_color="#d62728", width=1.5, ax=ax)
    nx.draw_networkx_edges(sub, pos, edgelist=keyed, edge_color="#d62728", width=4, ax=ax)
    nx.draw_networkx_labels(sub, pos, labels=nx.get_node_attributes(sub, "label"), font_size=8, ax=ax)
    ax.set_title(f"MiniRAG reasoning subgraph: {title}", fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, scatterpoints=1)
    ax.axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _draw_html(sub: nx.Graph, out: Path) -> Path:
    from pyvis.network import Network

    net = Network(height="720px", width="100%", cdn_resources="in_line", notebook=False)
    for node, attrs in sub.nodes(data=True):
        net.add_node(node, label=attrs["label"], title=attrs["title"], color=COLOURS[attrs["role"]],
                     shape="box" if attrs["role"] == "chunk" else "dot")
    for u, v, attrs in sub.edges(data=True):
        net.add_edge(u, v, color="#d62728" if attrs["on_path"] else "#1f77b4",
                     width=4 if attrs["key_score"] else (2 if attrs["on_path"] else 1),
                     title=f"eq.2 score {attrs['key_score']:.0f}" if attrs["key_score"] else "")
    out.write_text(_without_remote_resources(net.generate_html()), encoding="utf-8")
    return out


_REMOTE = re.compile(r"<(script|link)\b[^>]*\b(?:src|href)\s*=\s*[\"']https?://[^>]*>(?:\s*</script>)?",
                     re.IGNORECASE)


def _without_remote_resources(html: str) -> str:
    """Drop every script or stylesheet fetched from the network (pyvis links Bootstrap from a
    CDN for its optional menus); the graph's own JavaScript is inlined, so the page works offline."""
    return _REMOTE.sub("", html)
