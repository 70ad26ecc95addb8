"""Choose mini's settings on the TUNE halves: recall@5 / all-evidence@5 of mini for a grid of
bridge settings (``--grid bridges``), ranking weights (``--grid weights``), the size of the
query-relevant pool path chunks are filtered to (``--grid pool``), the question-entity coverage
of the top chunks (``--grid coverage``), the residual round (``--grid residual``) or eq. 2's
key edges, answer candidates and path length (``--grid eq2``) or the cap on chunks of one document in
the top k (``--grid doccap``) on every development set (indexes
reused from run_suite.py's workdirs).

    .venv/bin/python benchmarks/experiments/sweep_bridges.py [--grid bridges|weights|pool|coverage|residual|eq2|doccap]
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
import argparse  # noqa: E402

from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.run_suite import question_group, score  # noqa: E402

GRIDS = {
    "bridges": {"bridge_weight": [0.0, 0.5, 1.0, 1.5, 2.0], "bridge_seed_chunks": [3, 5], "bridge_steps": [1, 2],
                "bridge_damping": [0.8]},
    "weights": {"dense_weight": [1.0, 1.5, 2.0, 2.5], "lexical_weight": [0.75, 1.0, 1.25],
                "graph_weight": [0.1, 0.25, 0.5]},
    "pool": {"candidate_pool": [8, 10, 15, 20, 30, 40]},
    "coverage": {"coverage_weight": [0.0, 0.1, 0.2, 0.4, 0.6, 1.0], "coverage_depth": [10, 20, 40]},
    "residual": {"residual_weight": [0.0, 1.0, 2.0, 3.0], "residual_sources": [3, 5]},
    "eq2": {"key_edges": [30, 60, 120], "max_answer_candidates": [15, 30, 60], "path_length": [2, 3]},
    "doccap": {"max_chunks_per_document": [0, 1, 2, 3]},
}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its workdirs are reused)")
    p.add_argument("--sets", default=None, help="comma-separated development sets (default: every set found)")
    p.add_argument("--grid", choices=sorted(GRIDS), default="bridges")
    args = p.parse_args(argv)
    grid = GRIDS[args.grid]
    configure_threads(1)
    rows = []
    for name in (args.sets.split(",") if args.sets else devsets.available()):
        data = devsets.load(name)
        questions = [q for q in data.half("tune") if q.has_evidence]
        index, _ = open_corpus_index(args.out / f"{name}.workdir", data.documents)
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            if any(setting.get(k) == 0 for k in ("bridge_weight", "residual_weight", "coverage_weight")) \
                    and values != tuple(v[0] for v in grid.values()):
                continue  # the part switched off: one row, not one per setting of the rest
            records, groups = [], {}
            for q in questions:
                result = index.query(q.question, mode="mini", top_k=10, token_budget=10**9, **setting)
                records.append(score(q, [c.doc_id for c in result.chunks], [c.text for c in result.chunks]))
                groups.setdefault(question_group(name, q.type), []).append(records[-1])
            recall = 100 * sum(r["recall@5"] for r in records) / len(records)
            every = 100 * sum(r["all_evidence@5"] for r in records) / len(records)
            by_type = {g: [round(100 * sum(r[m] for r in rs) / len(rs), 1) for m in ("recall@5", "all_evidence@5")]
                       for g, rs in sorted(groups.items())} if len(groups) > 1 else {}
            rows.append({"set": name, **setting, "recall@5": recall, "all_evidence@5": every, "by_type": by_type})
            print(json.dumps(rows[-1]), flush=True)
    (args.out / f"sweep_{args.grid}.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
