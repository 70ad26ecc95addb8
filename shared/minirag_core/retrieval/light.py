"""LightRAG-style dual-level retrieval, for comparison and for users coming from LightRAG.

Low level: query entities -> nearest entity nodes -> their chunks. High level: the query's
themes -> nearest relations -> the chunks they were read from. Chunks are ranked by the
summed similarity of the entities and relations that reach them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..chunk_ranking import top_ids
from ..settings import RetrievalSettings
from ..types import KeyEdge, QueryMapping, RetrievalResult
from .common import materialise
from .sources import RetrievalSources

LIGHT_ENTITIES_PER_KEYWORD = 10
LIGHT_RELATIONS = 20


def _relations_among(sources: RetrievalSources, entities: dict[str, float]) -> list[tuple[str, str, float]]:
    """High level without relation vectors (offline co-occurrence edges carry none): the
    relations joining two matched entities, scored by their endpoints' mean similarity."""
    among = sources.graph.entity_subgraph(sorted(entities), 0, len(entities))
    scored = [(min(u, v), max(u, v), (entities[u] + entities[v]) / 2) for u, v in among.edges()]
    scored.sort(key=lambda r: (-r[2], r[0], r[1]))
    return scored[:LIGHT_RELATIONS]


def retrieve_light(sources: RetrievalSources, query: str, mapping: QueryMapping, settings: RetrievalSettings,
                   doc_metadata: dict[str, dict[str, Any]] | None = None) -> RetrievalResult:
    scores: dict[str, float] = defaultdict(float)
    entities: dict[str, float] = {}
    chunk_entities: dict[str, list[str]] = defaultdict(list)
    low_level = mapping.entities or [query]
    for vector in sources.embedder.embed(low_level):
        for entity_id, similarity in sources.nearest_entities(vector, LIGHT_ENTITIES_PER_KEYWORD):
            # rounded: vector stores differ in the last float digits, and ties must break alike
            entities[entity_id] = max(round(similarity, 5), entities.get(entity_id, 0.0))
    for entity_id, chunks in sources.graph.chunk_links(sorted(entities)).items():
        for chunk_id in chunks:
            scores[chunk_id] += entities[entity_id]
            chunk_entities[chunk_id].append(entity_id)
    high_level = " ".join([query, *mapping.answer_types])
    relations = sources.nearest_relations(sources.embedder.embed([high_level])[0], LIGHT_RELATIONS)
    if not relations:
        relations = _relations_among(sources, entities)
    subgraph = sources.graph.entity_subgraph(sorted({n for u, v, _ in relations for n in (u, v)}), 1, 10_000)
    key_edges = []
    endpoint_links = sources.graph.chunk_links(sorted({n for u, v, _ in relations for n in (u, v)}))
    for source, target, similarity in relations:
        if not subgraph.has_edge(source, target):
            continue
        attrs = subgraph.edges[source, target]
        key_edges.append(KeyEdge(source, target, similarity, attrs.get("description", ""), attrs.get("keywords", "")))
        for chunk_id in set(endpoint_links.get(source, {})) & set(endpoint_links.get(target, {})):
            scores[chunk_id] += similarity
    ranked = [(c, scores[c]) for c in top_ids(dict(scores), len(scores))]
    via = {c: "graph" for c, _ in ranked}
    notes = [] if relations else ["no relation matched; low-level entities only"]
    if settings.fill:
        dense = sources.chunk_dense_scores(sources.embedder.embed([query])[0])
        extra = [(c, dense[c]) for c in top_ids(dense, len(dense)) if c not in scores]
        ranked.extend(extra)
        via.update({c: "fill" for c, _ in extra})
        if len(scores) < settings.top_k and extra:
            notes.append("filled with next-best dense chunks (via='fill')")
    chunks = materialise(sources, ranked, via, settings, doc_metadata, chunk_entities)
    return RetrievalResult(query=query, mode="light", chunks=chunks, mapping=mapping,
                           seeds=dict(sorted(entities.items())), key_edges=key_edges, notes=notes)
