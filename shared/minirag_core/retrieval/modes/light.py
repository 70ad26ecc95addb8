"""LightRAG-style dual-level retrieval, for comparison and for users coming from LightRAG.

Low level: query entities -> nearest entity nodes -> their chunks. High level: the query's
themes -> nearest relations -> the chunks they were read from. As in LightRAG's "mix" mode, the
knowledge-graph evidence is fused with the chunks' own vector similarity: a chunk scores its
dense similarity plus ``light_graph_weight`` times its max-normalised graph evidence (its best matched
entity's similarity, idf-weighted and boosted where the chunk is *about* that entity, plus the
similarity of the relations read from it), so the graph reorders dense retrieval
instead of replacing it (``light_graph_weight`` is chosen on the tune halves of the benchmark).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping

from minirag_core.retrieval.topology.chunk_ranking import max_normalised, specificity
from minirag_core.scores import top_ids
from minirag_core.retrieval.query.seeds import nearest_entities
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.types import KeyEdge, QueryMapping, RetrievalResult
from minirag_core.retrieval.common import considered, keeping_vector, materialise, query_vector
from minirag_core.retrieval.sources import RetrievalSources

LIGHT_ENTITIES_PER_KEYWORD = 10
LIGHT_RELATIONS = 20
LIGHT_SUBJECT_BOOST = 2.0  # a matched entity's own passage (its title or heading) weighs (1 + this) times


def _relations_among(sources: RetrievalSources, entities: dict[str, float]) -> list[tuple[str, str, float]]:
    """High level without relation vectors (offline co-occurrence edges carry none): the
    relations joining two matched entities, scored by their endpoints' mean similarity."""
    among = sources.graph.entity_subgraph(sorted(entities), 0, len(entities))
    scored = [(min(u, v), max(u, v), (entities[u] + entities[v]) / 2) for u, v in among.edges()]
    scored.sort(key=lambda r: (-r[2], r[0], r[1]))
    return scored[:LIGHT_RELATIONS]


def retrieve_light(sources: RetrievalSources, query: str, mapping: QueryMapping, settings: RetrievalSettings,
                   doc_metadata: Mapping[str, dict[str, Any]] | None = None) -> RetrievalResult:
    scores: dict[str, float] = defaultdict(float)
    entities: dict[str, float] = {}
    chunk_entities: dict[str, list[str]] = defaultdict(list)
    low_level = mapping.entities or [query]
    for nearest in nearest_entities(sources, sources.embedder.embed(low_level), LIGHT_ENTITIES_PER_KEYWORD):
        for entity_id, similarity in nearest:
            # rounded: vector stores differ in the last float digits, and ties must break alike
            entities[entity_id] = max(round(similarity, 5), entities.get(entity_id, 0.0))
    vector = query_vector(sources, query, mapping)
    dense = sources.chunk_dense_scores(vector)
    matched = sorted(e for e, similarity in entities.items() if similarity >= settings.seed_min_similarity)
    about = {e: set(chunks) for e, chunks in sources.graph.subject_chunks(matched).items()}
    for entity_id, chunks in sources.graph.entity_chunk_ids(matched).items():
        weight = entities[entity_id] * specificity(len(chunks), len(dense), settings.graph_idf)
        for chunk_id in chunks:  # a chunk's best entity counts; a chunk *about* it counts more
            boost = 1.0 + LIGHT_SUBJECT_BOOST * (chunk_id in about.get(entity_id, ()))
            scores[chunk_id] = max(scores[chunk_id], weight * boost)
            chunk_entities[chunk_id].append(entity_id)
    high_level = " ".join([query, *mapping.answer_types])
    relations = sources.nearest_relations(sources.embedder.embed([high_level])[0], LIGHT_RELATIONS)
    if not relations:
        relations = _relations_among(sources, entities)
    endpoints = sorted({n for u, v, _ in relations for n in (u, v)})
    subgraph = sources.graph.entity_subgraph(endpoints, 0, len(endpoints))  # the relations among them
    endpoint_links = sources.graph.entity_chunk_ids(endpoints)
    key_edges = []
    for source, target, similarity in relations:
        if not subgraph.has_edge(source, target):
            continue
        attrs = subgraph.edges[source, target]
        key_edges.append(KeyEdge(source, target, similarity, attrs.get("description", ""), attrs.get("keywords", "")))
        for chunk_id in set(endpoint_links.get(source, ())) & set(endpoint_links.get(target, ())):
            scores[chunk_id] += similarity
    graph_n = max_normalised(dict(scores))
    fused = {c: dense.get(c, 0.0) + settings.light_graph_weight * graph_n.get(c, 0.0) for c in graph_n}
    ranked = [(c, fused[c]) for c in top_ids(fused, considered(settings))]
    via = {c: "graph" for c, _ in ranked}
    notes = [] if relations else ["no relation matched; low-level entities only"]
    if settings.fill:
        extra = [(c, dense[c]) for c in top_ids(dense, len(fused) + considered(settings)) if c not in fused]
        ranked = sorted(ranked + extra, key=lambda item: (-item[1], item[0]))
        via.update({c: "dense" for c, _ in extra})
    chunks = materialise(sources, ranked, via, settings, doc_metadata, chunk_entities, notes=notes)
    return RetrievalResult(query=query, mode="light", chunks=chunks, mapping=keeping_vector(mapping, vector, sources.embedder),
                           seeds=dict(sorted(entities.items())), key_edges=key_edges, notes=notes)
