"""MiniRAG core: heterogeneous graph indexing and path-scored retrieval for small models.

The public API is importable from here (loaded on first use, so ``import minirag_core`` stays
cheap). The packages follow the data: ``indexing`` (the write path) builds the ``graph``
through ``extraction``, keeps it in ``storage`` and embeds it for ``search``; ``retrieval``
reads them (Sec. 3.2); ``llm`` and ``embedding`` hold the model backends; ``interfaces`` is what
a user runs. Top-level modules: ``types`` (plain data), ``context`` (the answer prompt's
tables), ``scores`` and ``concurrency`` (numeric and threading primitives).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from minirag_core.types import (
    Chunk,
    Document,
    ExtractedEntity,
    ExtractedRelation,
    ExtractionResult,
    KeyEdge,
    QueryMapping,
    ReasoningPath,
    RetrievalResult,
    ScoredChunk,
)

_LAZY = {
    "MiniRAGIndex": "minirag_core.indexing.index",
    "MiniRAGSession": "minirag_core.retrieval.session",
    "RetrievalSettings": "minirag_core.retrieval.settings",
    "retrieve": "minirag_core.retrieval.pipeline",
    "aretrieve": "minirag_core.retrieval.pipeline",
    "RetrievalSources": "minirag_core.retrieval.sources",
    "Embedder": "minirag_core.embedding.base",
    "Extractor": "minirag_core.extraction.base",
    "QueryMapper": "minirag_core.extraction.base",
    "LLMBackend": "minirag_core.llm.base",
    "LLMError": "minirag_core.llm.base",
    "GraphView": "minirag_core.storage.base",
    "GraphStore": "minirag_core.storage.base",
    "VectorStore": "minirag_core.storage.base",
}

__all__ = [
    "Chunk",
    "Document",
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionResult",
    "KeyEdge",
    "QueryMapping",
    "ReasoningPath",
    "RetrievalResult",
    "ScoredChunk",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)


def __dir__() -> list[str]:
    return sorted(__all__)
