"""NaiveRAG: dense top-k over chunks, the paper's baseline."""

from __future__ import annotations

from typing import Any, Mapping

from minirag_core.scores import top_ids
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.types import RetrievalResult
from minirag_core.retrieval.common import considered, materialise
from minirag_core.retrieval.sources import RetrievalSources


def retrieve_naive(sources: RetrievalSources, query: str, settings: RetrievalSettings,
                   doc_metadata: Mapping[str, dict[str, Any]] | None = None) -> RetrievalResult:
    dense = sources.chunk_dense_scores(sources.embedder.embed([query])[0])
    ranked = [(c, dense[c]) for c in top_ids(dense, considered(settings))]
    notes: list[str] = []
    chunks = materialise(sources, ranked, {c: "dense" for c, _ in ranked}, settings, doc_metadata, notes=notes)
    return RetrievalResult(query=query, mode="naive", chunks=chunks, notes=notes)
