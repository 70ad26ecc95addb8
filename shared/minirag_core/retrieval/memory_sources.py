"""``InMemorySources``: ``RetrievalSources`` over any graph held in a ``NetworkXGraphStore``
with its vectors in memory (exact search), for graphs read from another store (e.g. a
LlamaIndex property graph) rather than built by a ``MiniRAGIndex``.

What is embedded (entity names, chunk ranking texts, the relations that get a vector) is the
core index's rule (``index_vectors``), so results match a core index over the same graph.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Mapping, MutableMapping

import networkx as nx
import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.embedding.windows import text_windows
from minirag_core.graph.heterogeneous import CHUNK, ENTITY, RELATION
from minirag_core.search.graph_vectors import chunk_vector_text, relation_text, vector_relations
from minirag_core.search.vectors import relation_has_meaning
from minirag_core.search.lexical import LexicalChunkIndex
from minirag_core.scores import ScoreTable, similarities
from minirag_core.storage.networkx_store import NetworkXGraphStore


def top_similar(ids: list[Any], matrix: np.ndarray, vector: np.ndarray, k: int) -> list[tuple[Any, float]]:
    """The ``k`` rows most similar to ``vector`` (exact search), best first, ties by id."""
    if not ids or k <= 0:
        return []
    sims = similarities(matrix, np.asarray(vector, dtype=np.float32))
    candidates = range(len(ids)) if len(ids) <= 4 * k else np.argpartition(-sims, 2 * k)[: 2 * k]
    order = sorted(candidates, key=lambda i: (-sims[i], str(ids[i])))[:k]
    return [(ids[i], float(sims[i])) for i in order]


def item_texts(g: nx.Graph, embedder: Embedder, nodes: Iterable[str],
               edges: Iterable[tuple[str, str]]) -> list[str]:
    """The texts the given graph items are embedded as (entity names, windows of chunk ranking
    texts, texts of the relations that get a vector), in the order given, without duplicates;
    items not in ``g`` are skipped."""
    texts = []
    for node in nodes:
        attrs = g.nodes[node] if node in g else {}
        if attrs.get("kind") == ENTITY:
            texts.append(attrs["name"])
        elif attrs.get("kind") == CHUNK:
            texts.extend(text_windows(embedder, chunk_vector_text(g, node)))
    for u, v in edges:
        attrs = g.edges[u, v] if g.has_edge(u, v) else {}
        if attrs.get("kind") == RELATION and relation_has_meaning(attrs["keywords"]):
            texts.append(relation_text(g, min(u, v), max(u, v)))
    return list(dict.fromkeys(texts))


def vector_texts(g: nx.Graph, embedder: Embedder) -> list[str]:
    """Every text the graph's items are embedded as (see :func:`item_texts`), in graph order."""
    return item_texts(g, embedder, g.nodes, g.edges)


def embed_missing(texts: list[str], embedder: Embedder, cache: MutableMapping[str, np.ndarray],
                  known: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Vectors of ``texts``: from ``cache``, else from ``known`` (vectors of the same model
    computed elsewhere), else embedded now; ``cache`` gains those it lacked."""
    vectors = {t: v for t, v in ((t, cache.get(t)) for t in texts) if v is not None}
    for text in [t for t in texts if t not in vectors and known is not None and t in known]:
        vectors[text] = cache[text] = known[text]
    missing = [t for t in texts if t not in vectors]
    if missing:
        for text, vector in zip(missing, embedder.embed(missing)):
            vectors[text] = cache[text] = np.asarray(vector, dtype=np.float32)
    return vectors


def embed_graph(g: nx.Graph, embedder: Embedder, cache: MutableMapping[str, np.ndarray],
                known: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Vectors of every text of the graph, embedding only those neither in ``cache`` (text ->
    vector, same model) nor in ``known`` (see :func:`embed_missing`); ``cache`` is updated and
    keeps only this graph's texts."""
    vectors = embed_missing(vector_texts(g, embedder), embedder, cache, known)
    for text in [t for t in list(cache) if t not in vectors]:
        cache.pop(text, None)
    return vectors


class InMemorySources:
    """``RetrievalSources`` over ``graph`` (a ``GraphView``) and ``vectors`` (text -> vector,
    see :func:`embed_graph`), with BM25 over the chunk texts."""

    def __init__(self, graph: NetworkXGraphStore, embedder: Embedder, vectors: dict[str, np.ndarray]) -> None:
        self.graph = graph
        self.embedder = embedder
        g = graph.graph
        self.entity_ids = graph.entity_ids()
        self.chunk_ids = graph.chunk_ids()
        self.relation_pairs = vector_relations(graph)
        dim = int(getattr(embedder, "dim", 0) or 0) if not vectors else len(next(iter(vectors.values())))
        self._entity_matrix = self._stack([g.nodes[e]["name"] for e in self.entity_ids], vectors, dim)
        windows = [(row, w) for row, c in enumerate(self.chunk_ids)
                   for w in text_windows(embedder, chunk_vector_text(g, c))]
        self._window_rows = np.array([row for row, _ in windows], dtype=np.int64)
        self._window_matrix = self._stack([w for _, w in windows], vectors, dim)
        self._relation_matrix = self._stack([relation_text(g, u, v) for u, v in self.relation_pairs], vectors, dim)
        self._type_pool: dict[str, list[str]] | None = None
        self._chunk_table: ScoreTable | None = None
        self.lexical = LexicalChunkIndex()
        self.filtered_views: OrderedDict = OrderedDict()  # retrieval/filtered_sources.py
        self.lexical.build({c: g.nodes[c]["text"] for c in self.chunk_ids})

    @staticmethod
    def _stack(texts: list[str], vectors: dict[str, np.ndarray], dim: int) -> np.ndarray:
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        return np.stack([vectors[t] for t in texts]).astype(np.float32)

    def type_pool(self) -> dict[str, list[str]]:
        """Entity types with example names (the answer-type pool of query mapping), cached."""
        if self._type_pool is None:
            self._type_pool = self.graph.type_pool()
        return self._type_pool

    def nearest_entities(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        return top_similar(self.entity_ids, self._entity_matrix, vector, k)

    def chunk_dense_scores(self, vector: np.ndarray) -> ScoreTable:
        """Similarity of ``vector`` to each chunk's best window (as ``VectorIndex``)."""
        if self._chunk_table is None:
            self._chunk_table = ScoreTable(self.chunk_ids, np.zeros(len(self.chunk_ids)))
        scores = np.full(len(self.chunk_ids), -1.0, dtype=np.float64)
        if self.chunk_ids:
            np.maximum.at(scores, self._window_rows,
                          similarities(self._window_matrix, np.asarray(vector, dtype=np.float32)).astype(np.float64))
        return ScoreTable(self.chunk_ids, scores, self._chunk_table.position)

    def chunk_lexical_scores(self, query: str) -> dict[str, float]:
        return self.lexical.scores(query)

    def nearest_relations(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        return [(u, v, s) for (u, v), s in top_similar(self.relation_pairs, self._relation_matrix, vector, k)]
