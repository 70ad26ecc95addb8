"""What two graph stores must agree on: one corpus and everything retrieval reads through the
``GraphView`` protocol (shared by the FalkorDB and SQLite store tests)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document

from conftest import LIHUAWORLD

DATA = LIHUAWORLD.parent / "hotpotqa_100"  # beside the checkout, or LIHUAWORLD_DIR's folder


def corpus_of_passages() -> tuple[list[Document], list[str]]:
    """20 passages: the evidence of 6 questions plus the first others of the corpus."""
    corpus = {d["id"]: d["text"] for d in json.loads((DATA / "corpus.json").read_text(encoding="utf-8"))}
    questions = json.loads((DATA / "questions.json").read_text(encoding="utf-8"))
    chosen = [q for q in questions if all(t in corpus for t in q["evidence"].split("<and>"))][:6]
    titles = list(dict.fromkeys(t for q in chosen for t in q["evidence"].split("<and>")))
    titles += [t for t in corpus if t not in titles][: 20 - len(titles)]
    return [Document(id=t, text=corpus[t]) for t in titles], [q["question"] for q in chosen]


def retrieval_state(index: MiniRAGIndex) -> dict:
    """Everything the retrieval reads, through the GraphView protocol, plus the registry."""
    store = index.graph_store
    entities = store.entity_ids()
    chunk_ids = store.chunk_ids()
    sub = store.entity_subgraph(entities, 0, len(entities))
    return {"registry": index.graph_store.documents(), "chunks": store.chunks(chunk_ids),
            "entities": {e: store.entity(e) for e in entities},
            "links": store.chunk_links(entities), "chunk_ids": store.entity_chunk_ids(entities), "mentions": store.chunk_entities(chunk_ids),
            "subjects": store.subject_chunks(entities),
            "relations": sorted((min(u, v), max(u, v), a["weight"], a["description"], a["keywords"])
                                for u, v, a in sub.edges(data=True)),
            # examples of equal degree may come in another order
            "types": {t: sorted(names) for t, names in store.type_pool(100_000).items()}, "stats": store.stats()}


def assert_same_expansion(local: MiniRAGIndex, other: MiniRAGIndex) -> None:
    """``entity_subgraph`` gives the networkx store's nodes (in order) and edges on ``other``."""
    entities = local.graph_store.entity_ids()
    hubs = sorted(entities, key=lambda e: (-len(local.graph_store.graph[e]), e))[:3]
    for seeds, hops, max_nodes, cap in [(hubs[:1], 1, 100, 40), (hubs, 2, 60, 40), (hubs, 2, 500, 3),
                                        (hubs[1:], 3, 25, 5), (["no such entity"], 2, 10, 40)]:
        ours = local.graph_store.entity_subgraph(seeds, hops, max_nodes, max_neighbors=cap)
        theirs = other.graph_store.entity_subgraph(seeds, hops, max_nodes, max_neighbors=cap)
        assert list(theirs.nodes(data=True)) == list(ours.nodes(data=True)), (seeds, hops, max_nodes, cap)
        assert nx.utils.edges_equal(theirs.edges(data=True), ours.edges(data=True))
    assert len(local.graph_store.entity_subgraph(hubs, 2, 500, max_neighbors=3)) > len(hubs)
