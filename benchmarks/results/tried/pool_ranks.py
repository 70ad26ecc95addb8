"""Every chunk of the query-relevant pool ranks, the graph term only adds (not adopted).

The library ranks the pool's chunks on a reasoning path first and the others after them
(``via="fill"``), as MiniRAG's chunk filtering does. This variant replaces ``rank_chunks`` so
that every pool chunk ranks by relevance plus the graph term. Run from the repository root after
``benchmarks/run_suite.py`` built its indexes:
``.venv/bin/python benchmarks/results/tried/pool_ranks.py '{"all_pool": [false, true], "candidate_pool": [10, 15, 25, 40]}'``.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks import devsets  # noqa: E402
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.run_suite import question_group, score  # noqa: E402
import minirag_core.retrieval.mini as mini  # noqa: E402
from minirag_core.chunk_ranking import max_normalised, rank_chunks  # noqa: E402

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
    configure_threads(1)
    grid = json.loads(sys.argv[1])
    for name in ("musique_50", "hotpotqa_100", "lihuaworld"):
        dataset = devsets.load(name)
        questions = [q for q in dataset.half("tune") if q.has_evidence]
        index, _ = open_corpus_index(DEFAULT_OUT / f"{name}.workdir", dataset.documents)
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            ALL_POOL["on"] = bool(setting.get("all_pool"))
            overrides = {k: v for k, v in setting.items() if k != "all_pool"}
            records, groups = [], {}
            for q in questions:
                result = index.query(q.question, mode="mini", top_k=10, token_budget=10**9, **overrides)
                records.append(score(q, [c.doc_id for c in result.chunks], [c.text for c in result.chunks]))
                groups.setdefault(question_group(name, q.type), []).append(records[-1])

            def pct(rows, metric):
                return round(100 * sum(r[metric] for r in rows) / len(rows), 1)

            print(name, setting, pct(records, "recall@5"), pct(records, "all_evidence@5"),
                  {g: (pct(v, "recall@5"), pct(v, "all_evidence@5")) for g, v in groups.items()}, flush=True)


if __name__ == "__main__":
    main()
