"""``CoreSources``: the ``RetrievalSources`` of a ``MiniRAGIndex`` (graph store, vector index, BM25)."""

from __future__ import annotations

from collections import OrderedDict
import threading
from typing import Mapping

import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.graph.aggregation import Aggregation, Cluster, aggregate
from minirag_core.llm.base import LLMBackend
from minirag_core.retrieval.extensions.aggregated import cluster_summary
from minirag_core.search.lexical import LexicalChunkIndex, TokenStore
from minirag_core.scores import ScoreTable
from minirag_core.storage.base import GraphStore
from minirag_core.search.vectors import CHUNKS, ENTITIES, RELATIONS, VectorIndex


class CoreSources:
    """``RetrievalSources`` over a graph store, a ``VectorIndex`` and a BM25 index built lazily."""

    #: the stores may be read from two threads at once (a query's graph half beside its question's encoding)
    parallel_reads = True

    def __init__(self, graph: GraphStore, vectors: VectorIndex, embedder: Embedder,
                 token_store: TokenStore | None = None, llm: LLMBackend | None = None) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.lexical = LexicalChunkIndex(token_store)
        self.filtered_views: OrderedDict = OrderedDict()  # retrieval/filtered_sources.py
        self.llm = llm  # writes the clusters' summaries, when given
        self._aggregation: Aggregation | None = None
        self._summaries: dict[str, str] = {}
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """The graph changed: the next lexical query brings BM25 up to date (new chunks only
        are tokenised) and the next aggregated one clusters the graph again."""
        self.lexical.mark_stale()
        self.filtered_views.clear()
        with self._lock:
            self._aggregation, self._summaries = None, {}

    def aggregation(self) -> Aggregation:
        """The entity graph's cluster hierarchy (``graph/aggregation.py``), computed on first use
        after a write: a function of the graph, so equal to the rebuilt index's."""
        with self._lock:
            if self._aggregation is None:
                self._aggregation = aggregate(self.graph.entity_ids(), self.graph.relation_keywords())
            return self._aggregation

    def cluster_summary(self, cluster: Cluster) -> str:
        """A cluster's summary (extractive; the model's when the index has one), kept until a write."""
        if cluster.id not in self._summaries:
            self._summaries[cluster.id] = cluster_summary(self.graph, cluster, self.llm)
        return self._summaries[cluster.id]

    def nearest_entities(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        return [(i, s) for i, s, _ in self.vectors.nearest(ENTITIES, vector, k)]

    def nearest_entities_many(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """``nearest_entities`` for several vectors (one vector-store call past the ANN threshold)."""
        found = self.vectors.nearest_many(ENTITIES, vectors, k, metadata=False)
        return [[(i, s) for i, s, _ in nearest] for nearest in found]

    def entity_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored name vectors of ``ids`` held in memory (none when entities are searched in
        the store's ANN index)."""
        if not self.vectors.in_memory(ENTITIES):
            return {}
        _, matrix, position = self.vectors.position(ENTITIES)
        return {i: matrix[position[i]] for i in ids if i in position}

    def dense_score_count(self) -> int | None:
        """How many chunks ``chunk_dense_scores`` will score (every chunk held in memory), or None
        when that depends on the question (the store's nearest chunks past the in-memory limit)."""
        if not self.vectors.in_memory(CHUNKS):
            return None
        return len(self.vectors.position(CHUNKS)[0])

    def chunk_dense_scores(self, vector: np.ndarray) -> ScoreTable:
        return self.vectors.chunk_similarities(vector)

    def lexical_index(self) -> LexicalChunkIndex:
        """The BM25 index, brought up to date with the graph."""
        lexical = self.lexical
        if not lexical.is_built:
            lexical.refresh(self.graph.chunk_ids(), lambda ids: {c: a["text"] for c, a in self.graph.chunks(ids).items()})
        return lexical

    def chunk_lexical_scores(self, query: str) -> Mapping[str, float]:
        """BM25 scores as a ``ScoreTable`` over every chunk (0 where no term is shared)."""
        table = self.lexical_index().table(query)
        return {} if table is None else table

    def nearest_relations(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        return [(m["source"], m["target"], s) for _, s, m in self.vectors.nearest(RELATIONS, vector, k)
                if "source" in m and "target" in m]
