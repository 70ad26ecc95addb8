"""Sec. 3.2.1: seed entities V_s (query entities grounded in the graph) and answer
candidates V_a (entities of a predicted answer type near the seeds)."""

from __future__ import annotations

import networkx as nx
import numpy as np

from minirag_core.graph.names import normalize_entity_name
from minirag_core.retrieval.sources import RetrievalSources
from minirag_core.types import is_known_type


def nearest_entities(sources: RetrievalSources, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
    """``sources.nearest_entities`` for each vector, in one call where the sources batch them."""
    many = getattr(sources, "nearest_entities_many", None)
    return many(vectors, k) if many is not None else [sources.nearest_entities(v, k) for v in vectors]


def select_seeds(sources: RetrievalSources, query_entities: list[str], *, top_k: int,
                 min_similarity: float) -> dict[str, dict[str, float]]:
    """For each query entity, the nearest entity nodes by name: {query entity: {seed: w_v}}.

    An exact (normalised) name match always counts with similarity 1.
    """
    if not query_entities:
        return {}
    vectors = sources.embedder.embed(query_entities)
    seeds: dict[str, dict[str, float]] = {}
    for query_entity, nearest in zip(query_entities, nearest_entities(sources, vectors, top_k)):
        found = {eid: sim for eid, sim in nearest if sim >= min_similarity}
        exact = normalize_entity_name(query_entity)
        if exact and sources.graph.entity(exact) is not None:
            found[exact] = 1.0
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
