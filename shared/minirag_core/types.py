"""Plain data types shared by every step of MiniRAG's indexing and retrieval."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Document:
    """A source document: text plus the caller's metadata, kept unchanged."""

    id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """A token window of a document (a chunk node of the heterogeneous graph)."""

    id: str
    doc_id: str
    order: int
    text: str
    n_tokens: int
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExtractedEntity:
    """One entity as read from one chunk (before merging across chunks)."""

    name: str
    type: str
    description: str


@dataclass
class ExtractedRelation:
    """One entity-entity relationship as read from one chunk."""

    source: str
    target: str
    description: str
    keywords: str = ""
    weight: float = 1.0


@dataclass
class ExtractionResult:
    """What an extractor found in one chunk."""

    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    content_keywords: list[str] = field(default_factory=list)
    unparsed_records: int = 0
    #: names of the entities the chunk is *about* (an encyclopedic passage's title, a section's
    #: heading), as opposed to the ones it merely mentions; each is also in ``entities``
    subject_entities: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ExtractionResult":
        return cls(
            entities=[ExtractedEntity(**e) for e in data.get("entities", [])],
            relations=[ExtractedRelation(**r) for r in data.get("relations", [])],
            content_keywords=list(data.get("content_keywords", [])),
            unparsed_records=int(data.get("unparsed_records", 0)),
            subject_entities=list(data.get("subject_entities", [])),
        )


@dataclass
class QueryMapping:
    """Sec. 3.2.1: the query's entities and its predicted answer types."""

    entities: list[str]
    answer_types: list[str]
    source: str = "model"  # "model", "offline" or "fallback"


@dataclass
class ScoredChunk:
    """A retrieved chunk with its rank score and why it was picked."""

    chunk_id: str
    doc_id: str
    text: str
    score: float
    n_tokens: int
    metadata: dict[str, Any] = field(default_factory=dict)
    via: str = "graph"  # "graph" (linked to a reasoning path), "fill" (next-best), "dense", "bm25"
    entities: list[str] = field(default_factory=list)


@dataclass
class KeyEdge:
    """An entity-entity edge with its eq. 2 score."""

    source: str
    target: str
    score: float
    description: str = ""
    keywords: str = ""


@dataclass
class ReasoningPath:
    """A path kept by eq. 3 for (query entity, seed)."""

    query_entity: str
    nodes: list[str]
    score: float


@dataclass
class RetrievalResult:
    """Everything retrieval found, and why."""

    query: str
    mode: str
    chunks: list[ScoredChunk]
    mapping: QueryMapping | None = None
    seeds: dict[str, float] = field(default_factory=dict)
    answer_candidates: list[str] = field(default_factory=list)
    key_edges: list[KeyEdge] = field(default_factory=list)
    paths: list[ReasoningPath] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_context(self) -> str:
        """Render the retrieved knowledge as the data tables of the answer prompt."""
        from .prompts import render_context

        return render_context(self)
