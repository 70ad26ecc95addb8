"""Tunable parameters of retrieval, with defaults chosen by the sweep in benchmarks/experiments/sweep_retrieval.py."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int = 5                 # chunks returned (the paper's 5)
    token_budget: int = 6000       # max context tokens, embedding tokenizer (the paper's 6000)
    seed_top_k: int = 5            # nearest entity names per query entity
    seed_min_similarity: float = 0.55
    hops: int = 2                  # k of eq. 2 (k-hop subgraph around an edge)
    max_subgraph_nodes: int = 600
    max_answer_candidates: int = 30
    specific_candidates: bool = True  # among answer candidates as near the seeds, entities of fewer chunks first
    key_edges: int = 60            # |E_alpha hat|
    path_length: int = 2           # n: edges per reasoning path
    paths_per_seed: int = 10       # top-k paths per (query entity, seed)
    beam_width: int = 64
    max_branch: int = 16
    candidate_pool: int = 15       # |V_c hat|: relevant chunks path chunks are filtered to (sweep_bridges --grid pool)
    dense_weight: float = 2.0      # chunk ranking: query vs chunk (best window); sweep_bridges.py --grid weights
    lexical_weight: float = 1.0    # chunk ranking: BM25, max-normalised
    graph_weight: float = 0.25     # chunk ranking: eq. 3 scores of paths reaching the chunk, max-normalised
    graph_idf: bool = True         # weight entity-chunk links by the entity's inverse chunk frequency
    bridge_weight: float = 1.5     # chunk ranking: reached through a bridge entity (0 = off)
    bridge_seed_chunks: int = 5    # most query-relevant chunks whose entities are followed
    bridge_steps: int = 2          # chunk -> entity -> chunk steps (multi-hop chains)
    bridge_damping: float = 0.8    # each step keeps this share of the score
    bridge_specificity: float = 1.0  # a bridge entity passes on (its specificity, 0-1) ** this: hubs carry little
    # a bridge entity's mentions among this many most query-relevant chunks do not count against its
    # specificity (0 = off): a name the query's own neighbourhood shares is its topic, not a hub. 10-40 tie
    # on recall@5 on the six tune halves (HotpotQA +0.9, MuSiQue +1.0); 30-40 lose no recall@2
    # (sweep_all_sets.py, graph_adds/sweep_bridge_local_pool_tune.json)
    bridge_local_pool: int = 30
    bridge_frontier: int = 20      # strongest chunks a step reached that the next starts from (0 = all); 20 ties all on the tune halves
    # a second round (retrieval/extensions/residual.py), off by default: on the tune halves at 2.0 MuSiQue rose 69.2/38.5 ->
    # 70.2/46.2 (r@5/all@5), HotpotQA stayed, LiHuaWorld (chat) lost a question; 3 more embeddings a query
    residual_weight: float = 0.0   # chunk ranking: linked to a top chunk and relevant to what it leaves (0 = off)
    residual_sources: int = 3      # top chunks (one per subject) whose residual questions are asked
    residual_floor_rank: int = 50  # residual relevance counts above the score of this rank's chunk
    light_graph_weight: float = 0.2  # light mode: graph evidence added to dense similarity (0 = naive)
    # the top chunks name the question's entities between them (retrieval/extensions/aspect_coverage.py; by text or through
    # the entity nodes a question entity matched): 0.4 on the tune halves (sweep_bridges --grid coverage)
    coverage_weight: float = 0.4   # bonus for naming an entity no higher chunk names, x the best score (0 = off)
    coverage_depth: int = 20       # how many of the best chunks are re-ordered
    # at most this many chunks of one document in the top_k (0 = no cap; the rest move below the top_k);
    # each result names its document. Caps 1-3 tie on the tune halves of all four dev sets; 2 keeps a
    # long page from filling the top 5 and still lets its two best sections through
    max_chunks_per_document: int = 2
    # mini mode: a document's chunks after its best-ranked one keep this share of what the graph (paths,
    # bridges) added to their relevance (1 = every chunk keeps it all): a page's sections all sit near the
    # same chunks, so the graph's evidence is counted once per page. 0-0.5 tie on recall@5 on all six tune
    # halves; 0.5 keeps the most answer text in the top 5 (sweep_all_sets.py, graph_adds/sweep_document_share_tune.json)
    document_graph_share: float = 0.5
    # LeanRAG's bottom-up evidence (retrieval/extensions/aggregated.py): clusters up to the lowest common
    # ancestors of the query's entities, their summaries and the paths inside them replace the graph rows
    aggregate: bool = False        # mini mode: show aggregated evidence (the chunks do not change)
    aggregate_anchors: int = 4     # strongest seeds whose lowest common clusters are taken
    aggregate_clusters: int = 4    # most clusters shown (lowest level first)
    aggregate_paths: int = 5       # most reasoning paths and cluster relations shown
    fill: bool = True              # top up to top_k with next-best chunks when paths yield fewer

    def with_overrides(self, **overrides: Any) -> "RetrievalSettings":
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
