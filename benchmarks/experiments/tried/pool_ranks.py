"""Every chunk of the query-relevant pool ranks, the graph term only adds (not adopted).

The library ranks the pool's chunks on a reasoning path first and the others after them
(``via="fill"``), as MiniRAG's chunk filtering does. This variant replaces ``rank_chunks`` so
that every pool chunk ranks by relevance plus the graph term. Run from the repository root after
``benchmarks/quality/run_suite.py`` built its indexes:
``.venv/bin/python benchmarks/experiments/tried/pool_ranks.py '{"all_pool": [false, true], "candidate_pool": [10, 15, 25, 40]}'``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

sys.path.insert(0, str(Path(__file__).resolve().parent))

import minirag_core.retrieval.modes.mini as mini  # noqa: E402
from minirag_core.retrieval.topology.chunk_ranking import max_normalised, rank_chunks  # noqa: E402
from tune_rows import print_tune_rows  # noqa: E402

ALL_POOL = {"on": False}


def pool_ranks(relevance, graph_scores, candidate_pool, weights):
    """``rank_chunks``, or with ``ALL_POOL["on"]`` every pool chunk (path or not)."""
    if not ALL_POOL["on"]:
        return rank_chunks(relevance, graph_scores, candidate_pool, weights)
    graph = max_normalised(graph_scores)
    ranked = [(c, relevance.get(c, 0.0) + weights.graph * graph.get(c, 0.0)) for c in candidate_pool]
    return sorted(ranked, key=lambda item: (-item[1], item[0]))


def main() -> None:
    mini.rank_chunks = pool_ranks

    def rank(index, question, setting, _):
        ALL_POOL["on"] = bool(setting.get("all_pool"))
        overrides = {k: v for k, v in setting.items() if k != "all_pool"}
        return index.query(question.question, mode="mini", top_k=10, token_budget=10**9, **overrides).chunks

    print_tune_rows(json.loads(sys.argv[1]), rank)


if __name__ == "__main__":
    main()
