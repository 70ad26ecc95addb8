"""Mini mode's graph half (Sec. 3.2.2): seeds -> their subgraph -> answer candidates -> eq. 2 key
edges -> eq. 3 reasoning paths -> each chunk's graph term. It needs the query entities' vectors and
the number of chunks the dense scores cover, not the question's vector, so it can run while the
question is encoded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from minirag_core.graph.arrays import Subgraph
from minirag_core.retrieval.query.seeds import QueryVectors, select_seeds
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.retrieval.sources import RetrievalSources
from minirag_core.retrieval.topology.array_search import PathSearch, answer_candidates, key_edges, relation_subgraph
from minirag_core.retrieval.topology.batch_paths import named_paths, path_table
from minirag_core.retrieval.topology.chunk_ranking import relative_specificity
from minirag_core.retrieval.topology.chunk_terms import graph_terms
from minirag_core.types import QueryMapping, ReasoningPath


@dataclass
class GraphEvidence:
    """What the graph says about the query, for ``n_chunks`` chunks in all."""

    n_chunks: int
    seeds_by_entity: dict[str, dict[str, float]]
    subgraph: Subgraph
    candidates: list[str]
    chosen_edges: dict[tuple[str, str], int]
    paths: list[ReasoningPath]
    graph_scores: dict[str, float]  # eq. 3 scores of the paths reaching each chunk, idf-weighted
    chunk_entities: dict[str, list[str]]  # the path entities (hubs aside) linking each chunk to the query

    @property
    def seed_ids(self) -> set[str]:
        return {s for found in self.seeds_by_entity.values() for s in found}


def specificity_weights(sources: RetrievalSources, n_chunks: int) -> Callable[..., Mapping[str, float]]:
    """``(entity ids, exponent=1)`` -> each entity's specificity relative to an entity of one chunk,
    raised to the exponent, among ``n_chunks`` chunks."""
    def weights(ids: Iterable[str], exponent: float = 1.0) -> Mapping[str, float]:
        return relative_specificity(sources.graph, ids, n_chunks, exponent)
    return weights


def graph_evidence(sources: RetrievalSources, mapping: QueryMapping, settings: RetrievalSettings,
                   vectors: QueryVectors, n_chunks: int) -> GraphEvidence:
    """Seeds from the query entities' ``vectors``, then the graph work on arrays (array_search: the
    same results as the networkx functions it mirrors) and the graph term of every chunk a path reaches."""
    seeds_by_entity = select_seeds(sources, mapping.entities, top_k=settings.seed_top_k,
                                   min_similarity=settings.seed_min_similarity, vectors=vectors)
    seed_ids = {s for found in seeds_by_entity.values() for s in found}
    subgraph = relation_subgraph(sources.graph, sorted(seed_ids), settings.hops, settings.max_subgraph_nodes)
    candidates = answer_candidates(subgraph, seed_ids, mapping.answer_types, settings.max_answer_candidates,
                                   specificity_weights(sources, n_chunks) if settings.specific_candidates else None)
    chosen_edges = key_edges(subgraph, seed_ids, candidates, settings.hops, settings.key_edges)
    search = PathSearch(subgraph, chosen_edges, set(candidates))
    pairs = [(query_entity, seed, w) for query_entity, seeds in seeds_by_entity.items() for seed, w in sorted(seeds.items())]
    table = path_table(search, [(seed, w) for _, seed, w in pairs], max_length=settings.path_length,
                       beam_width=settings.beam_width, max_branch=settings.max_branch, k=settings.paths_per_seed)
    paths = [ReasoningPath(pairs[i][0], nodes, score) for i, nodes, score in zip(
        table.pair.tolist(), named_paths(search, table), table.scores.tolist())]
    graph_scores, chunk_entities = graph_terms(sources.graph, paths, n_chunks, settings.graph_idf, table,
                                               subgraph.nodes)
    return GraphEvidence(n_chunks, seeds_by_entity, subgraph, candidates, chosen_edges, paths, graph_scores,
                         chunk_entities)
