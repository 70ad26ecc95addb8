"""Plain data types shared by every step of MiniRAG's indexing and retrieval."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable

from minirag_core.context import render_context

#: how a path found through a bridge entity names where it starts (``retrieval/extensions/bridging.py``)
BRIDGE_LABEL_PREFIX = "bridge from "

#: relation keywords that say only "these two appear together" (no parsed relation, no link)
GENERIC_RELATION_KEYWORDS = frozenset({"co-occurrence", "conversation", "session time", ""})
#: the chunk metadata key of the section titles a chunk starts under (``page > section > subsection``)
HEADING_PATH_KEY = "heading_path"
#: the type of an entity no extractor could type (never an answer type or a type of the pool)
UNKNOWN_TYPE = "UNKNOWN"


def is_known_type(entity_type: str) -> bool:
    """Whether ``entity_type`` names a type (not blank, not :data:`UNKNOWN_TYPE`)."""
    kind = entity_type.strip().upper()
    return bool(kind) and kind != UNKNOWN_TYPE


def names_a_relation(keywords: str) -> bool:
    """Whether a relation's keywords say more than co-occurrence (a parsed relation, a link, code)."""
    return not {k.strip() for k in keywords.split(",")} <= GENERIC_RELATION_KEYWORDS


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
    #: where the chunk lies in its document: ``document.text[start_index:end_index] == text``
    #: (None when unknown: an index built before offsets were kept, or a window not found)
    start_index: int | None = None
    end_index: int | None = None


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
        # the records hold only strings and numbers: no deep copy (``asdict``'s took 0.2 s of a 200-passage build)
        return {"entities": [dict(vars(e)) for e in self.entities], "relations": [dict(vars(r)) for r in self.relations],
                "content_keywords": list(self.content_keywords), "unparsed_records": self.unparsed_records,
                "subject_entities": list(self.subject_entities)}

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
    #: the question's vector where the mapper embedded it, and the name of the embedder that did:
    #: retrieval under that embedder reuses it (left out of comparisons and of ``to_dict``)
    query_vector: Any = field(default=None, repr=False, compare=False)
    vector_model: str = field(default="", repr=False, compare=False)

    def vector_for(self, embedder_name: str) -> Any:
        """``query_vector`` if ``embedder_name``'s embedder made it, else None."""
        same = self.query_vector is not None and bool(self.vector_model) and self.vector_model == embedder_name
        return self.query_vector if same else None


@dataclass
class ScoredChunk:
    """A retrieved chunk with its rank score and why it was picked."""

    chunk_id: str
    doc_id: str
    text: str
    score: float
    n_tokens: int
    metadata: dict[str, Any] = field(default_factory=dict)
    # what ranked it: "relevance" (dense + BM25), "graph" (paths or a bridge lifted it above a more relevant
    # chunk), "coverage" (names a query entity the chunks above miss), "fill" (a top-up to k), "dense", "bm25"
    via: str = "graph"
    entities: list[str] = field(default_factory=list)
    #: the chunk's place in its document, to cite it: ``text == document_text[start_index:end_index]``
    #: (None when unknown), and the section titles it starts under (empty where the page has none)
    start_index: int | None = None
    end_index: int | None = None
    heading_path: list[str] = field(default_factory=list)


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
    """A path kept by eq. 3 for (query entity, seed). ``specificity`` (0-1) is that of its least
    specific entity (1 for an entity in one chunk, near 0 for one in most chunks): explanations
    order paths by ``score * specificity``, so a path through a hub entity comes last."""

    query_entity: str
    nodes: list[str]
    score: float
    specificity: float = 1.0

    @property
    def weighted_score(self) -> float:
        return self.score * self.specificity

    @property
    def origin(self) -> str:
        """Where the path starts, for people: the query entity, or the bridge's source."""
        if self.query_entity.startswith(BRIDGE_LABEL_PREFIX):
            return self.query_entity
        return f"from query entity {self.query_entity!r}"


@dataclass
class ChunkExplanation:
    """Why a retrieved chunk was picked: the reasoning paths, key edges and answer candidates
    that touch the entities linking it to the query (in the result's order)."""

    chunk_id: str
    entities: list[str]
    paths: list[ReasoningPath]
    key_edges: list[KeyEdge]
    answer_candidates: list[str]

    def _overlap(self, nodes: Any) -> int:
        return len(set(self.entities).intersection(nodes))

    def ranked_paths(self) -> list[ReasoningPath]:
        """Paths sharing the most entities with the chunk first, then by hub-discounted score."""
        return sorted(self.paths, key=lambda p: (-self._overlap(p.nodes), -p.weighted_score, len(p.nodes)))

    def ranked_key_edges(self) -> list[KeyEdge]:
        """Key edges with both ends among the chunk's entities first, then those naming a relation
        (parsed from a sentence, a link, code) before bare co-occurrence, then by score."""
        return sorted(self.key_edges, key=lambda e: (-self._overlap((e.source, e.target)),
                                                     not names_a_relation(e.keywords), -e.score))


def sorted_paths(paths: Iterable[ReasoningPath]) -> list[ReasoningPath]:
    """The paths by (-weighted_score, -score, length, query entity, nodes), ties in their order."""
    paths = list(paths)
    scores = [p.score for p in paths]
    keys = zip([-(s * p.specificity) for s, p in zip(scores, paths)], [-s for s in scores],
               [len(p.nodes) for p in paths], [p.query_entity for p in paths], [p.nodes for p in paths], range(len(paths)))
    return [paths[key[-1]] for key in sorted(keys)]  # the keys compared as tuples, in C


def rank_paths(paths: Iterable[ReasoningPath]) -> list[ReasoningPath]:
    """Each distinct path once (the strongest of those with the same start and entities: a bridge
    reaching several chunks is one path), strongest first by ``weighted_score``, then by score,
    shorter first. Every listing of a result's paths (CLI, JSON, context, adapters) uses this order."""
    ordered = sorted_paths(paths)
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for path in ordered:
        key = (path.query_entity, tuple(path.nodes))
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


@dataclass
class ClusterSummary:
    """A summary node of the entity graph's aggregation: its level, main entities (names, and
    their ids) and summary."""

    id: str
    level: int
    entities: list[str]
    summary: str
    entity_ids: list[str] = field(default_factory=list)


@dataclass
class AggregatedEvidence:
    """The graph evidence of LeanRAG's bottom-up retrieval: from the query's entities (``anchors``)
    up to their lowest common clusters, those clusters' summaries, the relations between them
    (``{source, target, strength, example}``), and the reasoning paths and answer candidates
    inside them (``retrieval/extensions/aggregated.py``)."""

    anchors: list[str]
    clusters: list[ClusterSummary]
    relations: list[dict[str, Any]]
    paths: list[ReasoningPath]
    candidates: list[str]


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
    #: with ``RetrievalSettings.aggregate``: the compact graph evidence the context shows instead
    aggregated: AggregatedEvidence | None = None
    #: model tokens this query spent (query mapping, and the answer's call for an answer), as the
    #: model counted them: prompt_tokens, completion_tokens, total_tokens, calls, uncounted_calls
    token_usage: dict[str, int] = field(default_factory=dict)

    def ranked_paths(self) -> list[ReasoningPath]:
        """The reasoning paths as :func:`rank_paths` lists them: each once, strongest first."""
        return rank_paths(self.paths)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-serialisable): the mapping's query vector is left out; the paths are
        :meth:`ranked_paths`, each with its ``weighted_score`` (the score they are ordered by)."""
        mapping = self.mapping
        data = asdict(replace(self, mapping=None, paths=[]))
        data["paths"] = [{**asdict(p), "weighted_score": p.weighted_score} for p in self.ranked_paths()]
        data["mapping"] = None if mapping is None else {
            "entities": list(mapping.entities), "answer_types": list(mapping.answer_types), "source": mapping.source}
        return data

    def explain(self, chunk_id: str) -> ChunkExplanation:
        """The paths, key edges and answer candidates touching a retrieved chunk's own entities
        (the entities linking it to the query, hubs left out), strongest first."""
        chunk = next((c for c in self.chunks if c.chunk_id == chunk_id), None)
        if chunk is None:
            raise KeyError(f"chunk {chunk_id!r} is not in this result")
        entities = set(chunk.entities)
        return ChunkExplanation(
            chunk_id=chunk_id, entities=list(chunk.entities),
            paths=[p for p in self.ranked_paths() if entities.intersection(p.nodes)],
            key_edges=sorted((e for e in self.key_edges if e.source in entities or e.target in entities),
                             key=lambda e: -e.score),
            answer_candidates=[c for c in self.answer_candidates if c in entities])

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_context(self) -> str:
        """Render the retrieved knowledge as the data tables of the answer prompt."""
        return render_context(self)
