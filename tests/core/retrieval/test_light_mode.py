"""Light mode (LightRAG-style, fused with dense similarity as LightRAG's "mix" mode): the graph's
entity and relation evidence reorders dense retrieval; with its weight at zero it is naive."""

from __future__ import annotations

import networkx as nx
import numpy as np

from minirag_core.retrieval.modes.light import retrieve_light
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.storage.networkx_store import NetworkXGraphStore
from minirag_core.types import QueryMapping


class _Embedder:
    dim = 2

    def embed(self, texts):
        return np.ones((len(texts), 2), dtype=np.float32)


class _Sources:
    """Chunks a-d; entity x links a and c; dense similarity prefers b, then a, then c, then d."""

    def __init__(self, about_x: str = "") -> None:
        self.graph = NetworkXGraphStore(None)
        g: nx.Graph = self.graph.graph
        for order, chunk in enumerate("abcd"):
            g.add_node(chunk, kind="chunk", text=chunk, doc_id="doc-" + chunk, order=order, n_tokens=5,
                       subjects=["x"] if chunk == about_x else [])
        g.add_node("x", kind="entity", name="x", type="PERSON", description="", source_chunks=["a", "c"])
        g.add_edge("a", "x", kind="mention", description="x in a")
        g.add_edge("c", "x", kind="mention", description="x in c")
        self.embedder = _Embedder()

    def nearest_entities(self, vector, k):
        return [("x", 0.9)]

    def chunk_dense_scores(self, vector):
        return {"a": 0.60, "b": 0.65, "c": 0.40, "d": 0.30}

    def chunk_lexical_scores(self, query):
        return {}

    def nearest_relations(self, vector, k):
        return []


def _light(weight: float, about_x: str = "") -> list[tuple[str, str]]:
    settings = RetrievalSettings(top_k=4, light_graph_weight=weight)
    result = retrieve_light(_Sources(about_x), "who is x?", QueryMapping(entities=["x"], answer_types=[]), settings)
    return [(c.chunk_id, c.via) for c in result.chunks]


def test_zero_graph_weight_ranks_as_dense_retrieval() -> None:
    assert [c for c, _ in _light(0.0)] == ["b", "a", "c", "d"]


def test_graph_evidence_lifts_chunks_of_matched_entities_and_keeps_dense_ones() -> None:
    ranked = _light(0.5)
    assert [c for c, _ in ranked] == ["a", "c", "b", "d"]   # a: 0.60 + 0.5, c: 0.40 + 0.5 > b: 0.65
    assert dict(ranked) == {"a": "graph", "c": "graph", "b": "dense", "d": "dense"}


def test_the_chunk_about_a_matched_entity_weighs_more_than_one_mentioning_it() -> None:
    assert [c for c, _ in _light(0.5, about_x="c")] == ["c", "a", "b", "d"]  # c: 0.40 + 0.5, a: 0.60 + 0.5/3
