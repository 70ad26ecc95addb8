"""What retrieval reads: a graph view plus entity, chunk and relation search."""

from __future__ import annotations

from typing import Mapping, Protocol, runtime_checkable

import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.storage.base import GraphView


@runtime_checkable
class RetrievalSources(Protocol):
    graph: GraphView
    embedder: Embedder

    def nearest_entities(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Entity ids nearest to ``vector`` by name embedding, with cosine similarity."""

    def chunk_dense_scores(self, vector: np.ndarray) -> Mapping[str, float]:
        """Cosine similarity of ``vector`` to every chunk's ranking text (a ``ScoreTable`` keeps
        them in one array; past an ANN threshold, the nearest chunks only)."""

    def chunk_lexical_scores(self, query: str) -> dict[str, float]:
        """BM25 scores of chunks sharing terms with ``query``."""

    def nearest_relations(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        """Relation edges (source, target) nearest to ``vector``, with similarity."""
