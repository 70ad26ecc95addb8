"""Sec. 3.2.1: seed entities V_s (query entities grounded in the graph) and answer
candidates V_a (entities of a predicted answer type near the seeds)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import networkx as nx
import numpy as np

from minirag_core.extraction.wordlists import STOPWORDS
from minirag_core.graph.names import normalize_entity_name
from minirag_core.retrieval.sources import RetrievalSources
from minirag_core.types import QueryMapping, is_known_type


def nearest_entities(sources: RetrievalSources, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
    """``sources.nearest_entities`` for each vector, in one call where the sources batch them."""
    many = getattr(sources, "nearest_entities_many", None)
    return many(vectors, k) if many is not None else [sources.nearest_entities(v, k) for v in vectors]


#: a word, or an identifier kept whole (``stream_with_context``, ``info.data``, ``BaseModel``)
_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[.'’-][A-Za-z0-9_]+)*")


def named_spans(sources: RetrievalSources, query: str, max_words: int = 5) -> dict[str, str]:
    """Spans of ``query`` (1 to ``max_words`` words) that name an entity node, longest first
    where spans overlap: {span: entity id}. Spans of stop words alone are skipped; case is ignored."""
    words = _TOKEN.findall(query)
    taken = [False] * len(words)
    is_entity = getattr(sources.graph, "has_entity", None) or (lambda eid: sources.graph.entity(eid) is not None)
    found: dict[str, str] = {}
    for n in range(min(max_words, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            span = words[i:i + n]
            if any(taken[i:i + n]) or all(w.lower() in STOPWORDS for w in span):
                continue
            eid = normalize_entity_name(" ".join(span))
            if eid and is_entity(eid):
                found[" ".join(span)] = eid
                taken[i:i + n] = [True] * n
    return found


def with_named_entities(sources: RetrievalSources, query: str, mapping: QueryMapping) -> QueryMapping:
    """``mapping`` with the spans of ``query`` that name an entity node added to its entities
    (an exact name match then seeds each with similarity 1)."""
    known = {normalize_entity_name(e) for e in mapping.entities}
    extra = [span for span, eid in named_spans(sources, query).items() if eid not in known]
    return replace(mapping, entities=[*mapping.entities, *extra]) if extra else mapping


def named_nodes(sources: RetrievalSources, query_entities: list[str]) -> dict[str, str]:
    """{query entity: the entity node its normalised name names}, for those that name one."""
    named = {e: normalize_entity_name(e) for e in query_entities}
    return {e: eid for e, eid in named.items() if eid and sources.graph.entity(eid) is not None}


@dataclass(frozen=True)
class QueryVectors:
    """One row per query entity (``entities``) and the question's vector (None when not asked
    for); ``named`` maps each query entity naming an entity node to that node."""

    entities: np.ndarray
    named: dict[str, str]
    question: np.ndarray | None = None


def query_vectors(sources: RetrievalSources, query_entities: list[str], question: str | None = None,
                  question_vector: np.ndarray | None = None) -> QueryVectors:
    """A vector for each query entity: the stored name vector of the entity node it names (the
    same name, embedded at index time; the embedder ignores case), else its own; and, given
    ``question``, the question's (``question_vector`` where the caller has it). What must be
    embedded (the question, the entities naming no node) is embedded in one encoder pass."""
    named = named_nodes(sources, query_entities)
    stored_vectors = getattr(sources, "entity_vectors", None)
    stored = stored_vectors(sorted(set(named.values()))) if stored_vectors is not None and named else {}
    missing = list(dict.fromkeys(e for e in query_entities if named.get(e) not in stored))
    embed_question = question is not None and question_vector is None
    texts = [question] * embed_question + missing
    vectors = sources.embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    embedded = dict(zip(missing, vectors[int(embed_question):]))
    rows = [stored[named[e]] if named.get(e) in stored else np.asarray(embedded[e], dtype=np.float32)
            for e in query_entities]
    return QueryVectors(np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32), named,
                        vectors[0] if embed_question else question_vector)


def stored_vectors_only(sources: RetrievalSources, query_entities: list[str]) -> QueryVectors | None:
    """:func:`query_vectors` of ``query_entities`` when each names an entity node whose stored
    vector is at hand (nothing to embed), else None."""
    named = named_nodes(sources, query_entities)
    read = getattr(sources, "entity_vectors", None)
    if read is None or len(named) < len(query_entities):
        return None
    stored = read(sorted(set(named.values())))
    if any(named[e] not in stored for e in query_entities):
        return None
    rows = [stored[named[e]] for e in query_entities]
    return QueryVectors(np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32), named)


def select_seeds(sources: RetrievalSources, query_entities: list[str], *, top_k: int,
                 min_similarity: float, vectors: QueryVectors | None = None) -> dict[str, dict[str, float]]:
    """For each query entity, the nearest entity nodes by name: {query entity: {seed: w_v}}
    (``vectors``: :func:`query_vectors` of ``query_entities``, made here when not given).

    An exact (normalised) name match always counts with similarity 1.
    """
    if not query_entities:
        return {}
    vectors = vectors if vectors is not None else query_vectors(sources, query_entities)
    seeds: dict[str, dict[str, float]] = {}
    for query_entity, nearest in zip(query_entities, nearest_entities(sources, vectors.entities, top_k)):
        found = {eid: sim for eid, sim in nearest if sim >= min_similarity}
        if query_entity in vectors.named:
            found[vectors.named[query_entity]] = 1.0
        if found:
            seeds[query_entity] = found
    return seeds


def select_answer_candidates(subgraph: nx.Graph, seeds: set[str], answer_types: list[str],
                             limit: int) -> list[str]:
    """Entities of a predicted type in the seeds' neighbourhood, nearest (then most
    connected) first; never every node of that type in the whole graph."""
    wanted = {t.strip().upper() for t in answer_types if is_known_type(t)}
    if not wanted:
        return []
    found = [n for n, attrs in subgraph.nodes(data=True)
             if n not in seeds and str(attrs.get("type", "")).upper() in wanted]
    found.sort(key=lambda n: (subgraph.nodes[n].get("hop", 0), -subgraph.degree(n), n))
    return found[:limit]
