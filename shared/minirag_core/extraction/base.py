"""The extractor protocol: one chunk in, entities and relationships out."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from minirag_core.types import Chunk, ExtractionResult, QueryMapping


@runtime_checkable
class Extractor(Protocol):
    """Extracts MiniRAG's entities and relationships from chunks.

    ``name`` labels it; the extraction cache is keyed by its ``identity`` when it has one (a
    digest of its rules, models and prompts), else by ``name``: results of another or a
    changed extractor are never reused.
    """

    name: str

    def extract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]: ...

    async def aextract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]: ...


@runtime_checkable
class QueryMapper(Protocol):
    """Sec. 3.2.1: maps a query to its entities and up to 3 predicted answer types."""

    def map_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping: ...

    async def amap_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping: ...
