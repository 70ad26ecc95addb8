"""Parameter sweep of mini mode over ``RetrievalSettings`` overrides, on one reused index.

    .venv/bin/python benchmarks/experiments/sweep_retrieval.py                    # --grid oat,weights
    .venv/bin/python benchmarks/experiments/sweep_retrieval.py --grid structure --limit 100
    .venv/bin/python benchmarks/experiments/sweep_retrieval.py --set hops=1,2 --set graph_weight=0,0.5,1

Grids (each setting is a full ``index.query(q, mode="mini", **overrides)`` per question —
nothing is cached between settings, so every setting pays and benefits alike):
- ``oat``: one parameter at a time around the defaults (seed_min_similarity, seed_top_k,
  hops, path_length, paths_per_seed, candidate_pool, key_edges, max_subgraph_nodes,
  graph_idf, fill);
- ``weights``: the chunk-ranking weights dense x lexical x graph (3 x 3 x 3);
- ``structure``: hops x path_length x paths_per_seed x candidate_pool (small);
- ``--set name=v1,v2 ...``: your own full grid (replaces ``--grid``).
Prints recall@5 overall and on Multi questions (plus all-evidence, answer-in-context,
p50 latency) for every setting, sorted by overall recall.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import configure_threads, DEFAULT_WORKDIR, TOKEN_BUDGET, TOP_K, WARMUP_QUERY, open_corpus_index, result_sessions  # noqa: E402
from benchmarks.quality.lihuaworld import load_corpus_and_questions  # noqa: E402
from benchmarks.quality.metrics import aggregate_by_type, score_question  # noqa: E402

OAT = {
    "seed_min_similarity": [0.4, 0.5, 0.65, 0.75],
    "seed_top_k": [3, 10],
    "hops": [1, 3],
    "path_length": [1, 2, 4],
    "paths_per_seed": [3, 20],
    "candidate_pool": [10, 20, 80, 200],
    "key_edges": [20, 150],
    "max_subgraph_nodes": [300, 3000],
    "graph_idf": [False],
    "fill": [False],
}
WEIGHTS = {"dense_weight": [0.5, 1.0, 2.0], "lexical_weight": [0.0, 1.0, 2.0], "graph_weight": [0.0, 0.5, 1.0]}
STRUCTURE = {"hops": [1, 2], "path_length": [2, 3], "paths_per_seed": [5, 10], "candidate_pool": [20, 40, 80]}


def _coerce(name: str, raw: str, kind) -> object:
    if kind in (bool, "bool") or raw.lower() in ("true", "false"):
        return raw.lower() in ("1", "true", "yes")
    if kind in (int, "int"):
        return int(raw)
    return float(raw)


def settings_grid(grid_names: list[str], custom: list[str]) -> list[dict]:
    from minirag_core.retrieval.settings import RetrievalSettings

    types = {f.name: f.type for f in fields(RetrievalSettings)}
    if custom:
        axes = {}
        for item in custom:
            name, _, values = item.partition("=")
            if name not in types:
                raise SystemExit(f"--set {item}: {name!r} is not a RetrievalSettings field ({', '.join(types)})")
            axes[name] = [_coerce(name, v, types[name]) for v in values.split(",")]
        return [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
    grid: list[dict] = [{}]  # the defaults
    for g in grid_names:  # fields this core's RetrievalSettings lacks are left out
        if g == "oat":
            grid += [{k: v} for k, values in OAT.items() if k in types for v in values]
        elif g in ("weights", "structure"):
            axes = {k: v for k, v in (WEIGHTS if g == "weights" else STRUCTURE).items() if k in types}
            grid += [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]
        else:
            raise SystemExit(f"unknown grid {g!r}; choose oat, weights, structure")
    defaults = RetrievalSettings().to_dict()
    seen, out = set(), []
    for overrides in grid:  # drop settings equal to the defaults or to an earlier one
        key = tuple(sorted({**defaults, **overrides}.items()))
        if key not in seen:
            seen.add(key)
            out.append(overrides)
    return out


def label(overrides: dict) -> str:
    return "defaults" if not overrides else " ".join(f"{k}={v}" for k, v in overrides.items())



def _cell(value: float | None, spec: str) -> str:
    """A table cell; "–" where a metric has no questions (e.g. no Multi ones under --limit)."""
    return "–" if value is None else format(value, spec)

def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=None)
    p.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    p.add_argument("--questions", type=Path, default=None)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--grid", default="oat,weights", help="comma-separated: oat, weights, structure")
    p.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2", help="custom grid axis")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1; 0 = torch's default)")
    args = p.parse_args(argv)
    configure_threads(args.threads)

    docs, questions = load_corpus_and_questions(args.data, args.questions, args.limit)
    questions = [q for q in questions if q.has_evidence or q.type == "Single"]  # Null rows add no metric
    grid = settings_grid([g.strip() for g in args.grid.split(",") if g.strip()], args.set)
    index, build = open_corpus_index(args.workdir, docs)
    index.query(WARMUP_QUERY, mode="mini")
    print(f"sweeping {len(grid)} settings of mini mode over {len(questions)} questions "
          f"(index {'reused' if build.reused else 'built'}: {index.stats()})", flush=True)

    rows = []
    t_start = time.perf_counter()
    for i, overrides in enumerate(grid):
        records = []
        for q in questions:
            t0 = time.perf_counter()
            result = index.query(q.question, mode="mini", **{"top_k": TOP_K, "token_budget": TOKEN_BUDGET, **overrides})
            ms = (time.perf_counter() - t0) * 1000
            records.append(score_question(q.evidence, q.answer, q.type, result_sessions(result),
                                          [c.text for c in result.chunks], [c.n_tokens for c in result.chunks],
                                          ms, n_unknown_evidence=len(q.unknown_evidence)))
        agg = aggregate_by_type(records)
        row = {"overrides": overrides, "label": label(overrides),
               "recall@5": agg["overall"]["recall@5"], "multi_recall@5": agg.get("Multi", {}).get("recall@5"),
               "all_evidence@5": agg["overall"]["all_evidence@5"],
               "answer_in_context@5": agg["overall"]["answer_in_context@5"],
               "context_tokens": agg["overall"]["context_tokens"], "p50_ms": agg["overall"]["p50_ms"]}
        rows.append(row)
        print(f"[{i + 1}/{len(grid)}] {row['label']}: recall@5 {row['recall@5']:.1f}, "
              f"Multi {row['multi_recall@5'] or 0:.1f} ({time.perf_counter() - t_start:.0f} s)", flush=True)

    rows.sort(key=lambda r: (-(r["recall@5"] or 0), -(r["multi_recall@5"] or 0)))
    print("\n| setting | recall@5 | Multi recall@5 | all-evidence@5 | answer-in-context@5 | tokens | p50 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [_cell(r[k], ".1f") for k in ("recall@5", "multi_recall@5", "all_evidence@5", "answer_in_context@5")]
        print(f"| {r['label']} | " + " | ".join(cells) + f" | {_cell(r['context_tokens'], '.0f')} | {_cell(r['p50_ms'], '.1f')} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return rows


if __name__ == "__main__":
    main()
