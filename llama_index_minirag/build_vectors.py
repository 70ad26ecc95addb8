"""``BuildVectors``: the graph vectors MiniRAG retrieval searches, embedded while a
``PropertyGraphIndex`` is built, so a retriever's first query does not embed the graph.

:class:`~llama_index_minirag.extractor.MiniRAGExtractor` folds each chunk it extracts into a
graph of its own, built as :class:`~llama_index_minirag.graph_sources.PropertyGraphSources`
rebuilds the store's (the core's ``add_chunk``, then alias consolidation), and embeds the texts
of the items the chunk changed (entity names, chunk windows, relation texts) with the model the
retriever uses. Retrievers read them through :func:`built_vectors` (by embedding model name),
for as long as the extractor lives (the index holds it); a text the store ends up with that
was not embedded here (a write from elsewhere) is embedded at the query, as before.
"""

from __future__ import annotations

import threading
import weakref
from collections import ChainMap
from typing import Iterable, Mapping

import networkx as nx
import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.aliases import consolidate
from minirag_core.retrieval.memory_sources import embed_missing, item_texts
from minirag_core.types import Chunk, ExtractionResult

__all__ = ["BuildVectors", "built_vectors"]

_LIVE: "weakref.WeakSet[BuildVectors]" = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


class BuildVectors:
    """Text -> vector for the graph an extractor has built so far (one embedding model)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.graph = nx.Graph()
        self.vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        with _LIVE_LOCK:
            _LIVE.add(self)

    def add(self, chunks: Iterable[tuple[Chunk, ExtractionResult]]) -> None:
        """Fold ``chunks`` into the graph and embed the texts of the items they changed."""
        with self._lock:
            g = self.graph
            new = [(c, r) for c, r in chunks if c.id not in g]  # a chunk seen before keeps its vectors
            if not new:
                return
            entities: set[str] = set()
            edges: set[tuple[str, str]] = set()
            for chunk, extraction in new:
                found, relations = graph_ops.extraction_ids(extraction)
                entities |= found
                edges |= relations
                graph_ops.add_chunk(g, chunk, extraction)
            moves = consolidate(g, entities, [c.id for c, _ in new])
            entities |= moves.entities
            # a relation's text names its two entities, whose display names may have changed
            edges |= moves.edges | {(min(e, n), max(e, n)) for e in entities if e in g for n in g.neighbors(e)}
            chunks_changed = [c.id for c, _ in new] + sorted(moves.chunks)
            texts = item_texts(g, self.embedder, [*sorted(entities), *chunks_changed], sorted(edges))
            embed_missing(texts, self.embedder, self.vectors)


def built_vectors(embedder_name: str) -> Mapping[str, np.ndarray]:
    """The vectors live extractors embedded with the model named ``embedder_name``."""
    with _LIVE_LOCK:
        return ChainMap(*[b.vectors for b in list(_LIVE) if b.embedder.name == embedder_name])
