"""MiniRAG's mini mode (Sec. 3.2): query mapping -> seeds and answer candidates -> eq. 2
key edges -> eq. 3 reasoning paths (the graph half, ``mini_graph``) -> chunk filtering and
ranking under a token budget."""

from __future__ import annotations

from typing import Any, Mapping

from minirag_core.concurrency import beside
from minirag_core.retrieval.common import ChunkRecords, considered, keeping_vector, materialise
from minirag_core.retrieval.extensions.aspect_coverage import cover_aspects, linked_aspects, merge_named, named_aspects
from minirag_core.retrieval.extensions.bridge_arrays import bridges_over
from minirag_core.retrieval.extensions.bridging import Bridge, bridge_label
from minirag_core.retrieval.extensions.residual import distinct_sources, residual_scores
from minirag_core.retrieval.modes.mini_graph import graph_evidence
from minirag_core.retrieval.query.seeds import query_vectors, stored_vectors_only, with_named_entities
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.retrieval.sources import RetrievalSources
from minirag_core.retrieval.topology.chunk_ranking import (
    RankWeights, add_bridges, lifted_above, query_relevance, rank_chunks, spread_documents)
from minirag_core.scores import top_ids
from minirag_core.types import KeyEdge, QueryMapping, ReasoningPath, RetrievalResult, sorted_paths


def retrieve_mini(sources: RetrievalSources, query: str, mapping: QueryMapping,
                  settings: RetrievalSettings,
                  doc_metadata: dict[str, dict[str, Any]] | None = None) -> RetrievalResult:
    notes: list[str] = []
    records = ChunkRecords(sources.graph)  # chunk records read once for the steps after scoring
    # every span naming an entity node is a query entity; the coverage step keeps the mapping's own aspects
    aspects = list(dict.fromkeys(e.strip() for e in mapping.entities if e.strip()))
    mapping = with_named_entities(sources, query, mapping)
    weights = RankWeights(settings.dense_weight, settings.lexical_weight, settings.graph_weight)

    # when every query entity names a node with a stored vector, the graph half needs no encoder and
    # runs beside the question's encoding (for as many chunks as the dense scores will cover, checked
    # after); else one encoder pass makes the question's vector and those of the entities naming no node
    known = mapping.vector_for(getattr(sources.embedder, "name", ""))
    stored = stored_vectors_only(sources, mapping.entities) if known is None else None
    vectors = stored if stored is not None else query_vectors(sources, mapping.entities, query, known)
    expected = getattr(sources, "dense_score_count", lambda: None)()
    parallel = stored is not None and bool(mapping.entities) and expected is not None and getattr(
        sources, "parallel_reads", False)
    with beside(lambda: graph_evidence(sources, mapping, settings, vectors, expected), parallel) as graph_job:
        question = vectors.question if vectors.question is not None else sources.embedder.embed([query])[0]
        dense = sources.chunk_dense_scores(question)
        relevance = query_relevance(dense, sources.chunk_lexical_scores(query), weights)
    n_chunks = len(dense)
    evidence = graph_job.result() if graph_job is not None else None
    if evidence is None or evidence.n_chunks != n_chunks:
        evidence = graph_evidence(sources, mapping, settings, vectors, n_chunks)
    seeds_by_entity, seed_ids, paths = evidence.seeds_by_entity, evidence.seed_ids, evidence.paths
    graph_scores, chunk_entities = evidence.graph_scores, evidence.chunk_entities

    base = top_ids(relevance, considered(settings)) if seed_ids else []  # the ranking without the graph
    if weights.dense or weights.lexical:
        pool = top_ids(relevance, settings.candidate_pool)
    else:  # ablation "graph only": no relevance filter, the graph term ranks on its own
        pool = top_ids(graph_scores, settings.candidate_pool)
    ranked = rank_chunks(relevance, graph_scores, pool, weights, base)
    bridges: list[Bridge] = []
    if settings.bridge_weight > 0 and seed_ids:
        seed_strength = {s: max(found.get(s, 0.0) for found in seeds_by_entity.values()) for s in seed_ids}
        bridged, bridges = bridges_over(sources.graph, relevance, seed_strength, seed_chunks=settings.bridge_seed_chunks,
                                        steps=settings.bridge_steps, damping=settings.bridge_damping,
                                        max_frontier=settings.bridge_frontier, n_chunks=n_chunks,
                                        specificity_exponent=settings.bridge_specificity,
                                        local_pool=settings.bridge_local_pool)
        ranked = add_bridges(ranked, relevance, graph_scores, bridged, weights, settings.bridge_weight)
        for bridge in bridges:
            chunk_entities[bridge.target].append(bridge.entity)
        source_docs = {c: attrs.get("doc_id", c) for c, attrs in
                       records.read(sorted({b.source for b in bridges})).items()}
        paths.extend(ReasoningPath(bridge_label(bridge, source_docs), [bridge.entity], bridge.score)
                     for bridge in bridges)
    if settings.residual_weight > 0 and ranked:  # a second round: what the best chunks leave unanswered
        def relevance_of(texts: list[str]) -> list[Mapping[str, float]]:
            vectors = sources.embedder.embed(texts)
            return [query_relevance(sources.chunk_dense_scores(v), sources.chunk_lexical_scores(t), weights)
                    for v, t in zip(vectors, texts)]

        head = ranked[: considered(settings)]
        about = {c: a.get("subjects", []) for c, a in records.read([c for c, _ in head]).items()}
        residual, hops = residual_scores(sources.graph, query, distinct_sources(head, about, settings.residual_sources),
                                         relevance_of, n_chunks, floor_rank=settings.residual_floor_rank)
        ranked = add_bridges(ranked, relevance, graph_scores, residual, weights, settings.residual_weight)
        for hop in hops:
            chunk_entities[hop.target].append(hop.entity)
    if not seed_ids:
        notes.append("no query entity matched an entity node; ranked by query relevance (dense + BM25) only")
    if settings.document_graph_share < 1.0 and ranked and seed_ids:  # a document's graph evidence counts once
        head = records.read([c for c, _ in ranked[: max(considered(settings), settings.coverage_depth)]])
        ranked = spread_documents(ranked, relevance, {c: a["doc_id"] for c, a in head.items()},
                                  settings.document_graph_share)
    lifted = lifted_above(ranked, relevance)
    via = {c: "graph" if c in lifted else "relevance" for c, _ in ranked}
    if settings.fill and len(ranked) < settings.top_k * 4:
        taken = {c for c, _ in ranked}
        extra = [(c, relevance[c]) for c in top_ids(relevance, len(taken) + considered(settings)) if c not in taken]
        ranked.extend(extra)
        via.update({c: "relevance" for c, _ in extra})
    if settings.coverage_weight > 0 and len(aspects) > 1 and ranked and seed_ids:  # the head covers every entity
        head_texts = {c: a.get("text", "") for c, a in records.read([c for c, _ in ranked[: settings.coverage_depth]]).items()}
        before = [c for c, _ in ranked[: settings.top_k]]
        ranked_before = list(ranked)
        matched = {e.strip(): found for e, found in seeds_by_entity.items()}  # the nodes each entity matched
        named = merge_named(named_aspects(aspects, head_texts),
                            linked_aspects(aspects, matched, sources.graph.chunk_entities(list(head_texts))))
        ranked = cover_aspects(ranked, named, len(aspects), settings.coverage_weight, settings.coverage_depth)
        if [c for c, _ in ranked[: settings.top_k]] != before:
            notes.append("best chunks re-ordered so that together they name each query entity (coverage_weight)")
            covered = lifted_above(ranked[: settings.coverage_depth], dict(ranked_before))
            via.update({c: "coverage" for c in covered if via.get(c) != "graph"})
    chunks = materialise(sources, ranked, via, settings, doc_metadata, chunk_entities, records=records, notes=notes)
    if seed_ids and chunks and not any(c.via == "graph" for c in chunks):
        notes.append("no graph evidence outweighed query relevance: the chunks are ranked by dense + BM25 relevance")

    key_edge_list = []
    edge_attrs = evidence.subgraph.edge_attrs(list(evidence.chosen_edges))
    for (u, v), score in evidence.chosen_edges.items():
        attrs = edge_attrs.get((u, v), {})
        key_edge_list.append(KeyEdge(u, v, float(score), attrs.get("description", ""), attrs.get("keywords", "")))
    paths = sorted_paths(paths)
    return RetrievalResult(
        query=query, mode="mini", chunks=chunks, mapping=keeping_vector(mapping, question, sources.embedder),
        seeds={s: max(found.get(s, 0.0) for found in seeds_by_entity.values()) for s in sorted(seed_ids)},
        answer_candidates=evidence.candidates, key_edges=key_edge_list, paths=paths, notes=notes,
    )
