"""NaiveRAG: dense top-k over chunks, the paper's baseline."""

from __future__ import annotations

from typing import Any

from ..chunk_ranking import top_ids
from ..settings import RetrievalSettings
from ..types import RetrievalResult
from .common import materialise
from .sources import RetrievalSources


def retrieve_naive(sources: RetrievalSources, query: str, settings: RetrievalSettings,
                   doc_metadata: dict[str, dict[str, Any]] | None = None) -> RetrievalResult:
    dense = sources.chunk_dense_scores(sources.embedder.embed([query])[0])
    ranked = [(c, dense[c]) for c in top_ids(dense, len(dense))]
    chunks = materialise(sources, ranked, {c: "dense" for c in dense}, settings, doc_metadata)
    return RetrievalResult(query=query, mode="naive", chunks=chunks)
