"""MiniRAG core: heterogeneous graph indexing and path-scored retrieval for small models."""

from .types import (
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
]
