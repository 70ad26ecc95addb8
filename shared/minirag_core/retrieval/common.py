"""Shared steps of every mode: the question's vector, and ranked chunk ids turned into ``ScoredChunk``s."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from minirag_core.retrieval.budget import set_budget_note
from minirag_core.retrieval.topology.chunk_ranking import fit_budget
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.types import QueryMapping, ScoredChunk
from minirag_core.retrieval.sources import RetrievalSources


def query_vector(sources: RetrievalSources, query: str, mapping: QueryMapping | None = None) -> Any:
    """The question's vector: the mapping's where the sources' embedder made it (a question
    past the embedder's short-text cache is then encoded once per query), else embedded now."""
    embedder = sources.embedder
    known = mapping.vector_for(getattr(embedder, "name", "")) if mapping is not None else None
    return known if known is not None else embedder.embed([query])[0]


def keeping_vector(mapping: QueryMapping, vector: Any, embedder: Any) -> QueryMapping:
    """``mapping`` carrying the question's ``vector`` as ``embedder`` made it (reused by a later
    retrieval with this mapping)."""
    return replace(mapping, query_vector=vector, vector_model=getattr(embedder, "name", ""))


def considered(settings: RetrievalSettings) -> int:
    """How many ranked chunks ``materialise`` looks at: a ranking need never be longer."""
    return settings.top_k * 4 + 20


class ChunkRecords:
    """The chunk records one query reads from the graph store, each read once: the steps after
    scoring (the document share, the coverage re-order, ``materialise``) ask for the ids they
    need and only those not yet read are fetched."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.held: dict[str, dict[str, Any]] = {}
        self.asked: set[str] = set()

    def read(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The records of ``ids`` the store holds, in the order of ``ids``."""
        missing = [c for c in dict.fromkeys(ids) if c not in self.asked]
        if missing:
            self.held.update(self.graph.chunks(missing))
            self.asked.update(missing)
        return {c: self.held[c] for c in ids if c in self.held}


def scores_follow_rank(chunks: list[ScoredChunk]) -> list[ScoredChunk]:
    """Lower any score above the one ranked before it to that one's. A step after scoring (the
    coverage re-order, the per-document cap, a top-up from another ranking) can place a chunk
    below a higher-scored one, so a consumer that sorts by score (a fusion retriever, a
    re-ranker's cut-off) keeps the ranking."""
    for before, chunk in zip(chunks, chunks[1:]):
        if chunk.score > before.score:
            chunk.score = before.score
    return chunks


def cap_per_document(ranked: list[tuple[str, float]], doc_of: Mapping[str, str], cap: int,
                     top_k: int) -> list[tuple[str, float]]:
    """The ranking with at most ``cap`` chunks of one document among the first ``top_k``: a
    further chunk of a document already there moves below the first ``top_k`` (it still fills
    the list when too few other documents are ranked)."""
    kept: list[tuple[str, float]] = []
    held: list[tuple[str, float]] = []
    per_doc: dict[str, int] = {}
    for chunk_id, score in ranked:
        doc = doc_of[chunk_id]
        if len(kept) < top_k and per_doc.get(doc, 0) >= cap:
            held.append((chunk_id, score))
            continue
        per_doc[doc] = per_doc.get(doc, 0) + 1
        kept.append((chunk_id, score))
    return kept[:top_k] + held + kept[top_k:]


def materialise(sources: RetrievalSources, ranked: list[tuple[str, float]], via: dict[str, str],
                settings: RetrievalSettings, doc_metadata: Mapping[str, dict[str, Any]] | None = None,
                chunk_entities: dict[str, list[str]] | None = None,
                records: ChunkRecords | None = None,
                notes: list[str] | None = None) -> list[ScoredChunk]:
    """Fit the ranking's first ``considered`` chunks into the budget and attach text, document id
    and metadata (``records``: what the query has read already). When the budget left out a
    ranked chunk while fewer than ``top_k`` fit, ``notes`` gets a note."""
    attrs = (records or ChunkRecords(sources.graph)).read([c for c, _ in ranked[: considered(settings)]])
    n_tokens = {c: int(a["n_tokens"]) for c, a in attrs.items()}
    present = [(c, s) for c, s in ranked if c in attrs]
    if settings.max_chunks_per_document > 0:
        present = cap_per_document(present, {c: attrs[c]["doc_id"] for c, _ in present},
                                   settings.max_chunks_per_document, settings.top_k)
    chosen = fit_budget(present, n_tokens, settings.top_k, settings.token_budget)
    if notes is not None:  # fewer than top_k chosen from more: fit_budget skipped the rest for the budget
        set_budget_note(notes, len(chosen), settings.top_k, settings.token_budget, len(present) - len(chosen))
    metadata = doc_metadata or {}
    linking = chunk_entities if chunk_entities is not None else {}  # a lazy mapping may look empty
    return [
        ScoredChunk(chunk_id=c, doc_id=attrs[c]["doc_id"], text=attrs[c]["text"], score=float(s),
                    n_tokens=n_tokens[c], metadata=dict(metadata.get(attrs[c]["doc_id"], {})),
                    via=via.get(c, "graph"), entities=sorted(set(linking.get(c, []))),
                    start_index=attrs[c].get("start_index"), end_index=attrs[c].get("end_index"),
                    heading_path=list(attrs[c].get("heading_path") or []))
        for c, s in chosen
    ]
