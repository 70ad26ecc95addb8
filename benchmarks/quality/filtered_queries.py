"""Metadata-filtered retrieval on a development set: latency against unfiltered queries, and mini
against naive on the questions a filter keeps.

Each document gets a ``bucket`` (0-99: a SHA-256 of its id), so ``{"bucket": {"$lt": 10}}`` passes
about 10 % of the documents and ``{"bucket": {"$lt": 50}}`` about half. For every question (the
set's tune and test halves), mini and naive run unfiltered and with each filter, interleaved, so
machine noise hits all alike (each question is asked once untimed first, so its embedding and
mapping are cached for every filter alike): the p50 latency of filtered against unfiltered queries
of the same run. Recall@5 and all-evidence@5 are taken on each filter's question set, the questions whose
evidence documents all pass (a filtered query cannot reach the others), for mini and naive on the
same filter. The first query with a new filter builds its view of the index (kept for later
queries): its latency is reported apart.

    .venv/bin/python benchmarks/quality/filtered_queries.py --set lihuaworld
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, BENCH_DIR, machine_info, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.metrics import mean, percentile  # noqa: E402

MODES = ("mini", "naive")
FILTERS = {"all": None, "10%": {"bucket": {"$lt": 10}}, "50%": {"bucket": {"$lt": 50}}}
K = 5


def bucket(doc_id: str) -> int:
    return int.from_bytes(hashlib.sha256(doc_id.encode("utf-8")).digest()[:4], "big") % 100


def passes(name: str, doc_id: str) -> bool:
    spec = FILTERS[name]
    return spec is None or bucket(doc_id) < spec["bucket"]["$lt"]


def run(set_name: str, out: Path, rebuild: bool, limit: int | None) -> dict:
    data = devsets.load(set_name)
    docs = [replace(d, metadata={**d.metadata, "bucket": bucket(d.id)}) for d in data.documents]
    questions = [q for q in data.questions if q.has_evidence][:limit]
    index, build = open_corpus_index(out / f"filters_{set_name}.workdir", docs, rebuild=rebuild)
    for mode in MODES:  # warm-up: BM25, type pool, caches
        index.query(questions[0].question, mode=mode)
    first_ms: dict[str, dict[str, float]] = {}
    for name, spec in FILTERS.items():  # the first query with a new filter builds its view
        if spec is not None:
            first_ms[name] = {}
            for mode in MODES:
                index.sources.filtered_views.clear()
                start = time.perf_counter()
                index.query(questions[0].question, mode=mode, filter=spec)
                first_ms[name][mode] = (time.perf_counter() - start) * 1000
    records = {f: {m: [] for m in MODES} for f in FILTERS}
    names = list(FILTERS)
    for number, q in enumerate(questions):
        for mode in MODES:  # untimed: the question's embedding and mapping are then cached for every filter alike
            index.query(q.question, mode=mode)
        for name in names[number % len(names):] + names[:number % len(names)]:  # each filter first in turn
            spec = FILTERS[name]
            for mode in MODES:
                start = time.perf_counter()
                result = index.query(q.question, mode=mode, filter=spec, top_k=K)
                latency = (time.perf_counter() - start) * 1000
                doc_ids = [c.doc_id for c in result.chunks]
                assert all(passes(name, d) for d in doc_ids), "a filtered query returned a failing chunk"
                kept = all(passes(name, e) for e in q.evidence)
                wanted = set(q.evidence)
                records[name][mode].append({
                    "id": q.id, "latency_ms": latency, "kept": kept, "n_chunks": len(doc_ids),
                    "recall@5": len(wanted & set(doc_ids[:K])) / len(wanted),
                    "all_evidence@5": float(wanted <= set(doc_ids[:K]))})
    passing_docs = {n: sum(passes(n, d.id) for d in docs) for n in FILTERS}
    summary = {}
    for name in FILTERS:
        row = {"documents_passing": passing_docs[name], "share_of_documents": round(passing_docs[name] / len(docs), 3)}
        for mode in MODES:
            recs = records[name][mode]
            kept = [r for r in recs if r["kept"]]
            p50 = percentile([r["latency_ms"] for r in recs], 50)
            base = percentile([r["latency_ms"] for r in records["all"][mode]], 50)
            row[mode] = {"p50_ms": p50, "p50_vs_unfiltered": p50 / base if base else None,
                         "p95_ms": percentile([r["latency_ms"] for r in recs], 95),
                         "first_query_ms": first_ms.get(name, {}).get(mode),
                         "questions_kept": len(kept),
                         "recall@5": 100 * mean(r["recall@5"] for r in kept) if kept else None,
                         "all_evidence@5": 100 * mean(r["all_evidence@5"] for r in kept) if kept else None,
                         "short_results": sum(r["n_chunks"] < min(K, passing_docs[name]) for r in recs)}
        summary[name] = row
    return {"set": set_name, "questions": len(questions), "documents": len(docs), "index": index.stats(),
            "filters": {n: s for n, s in FILTERS.items()}, "summary": summary, "index_build": build.to_dict(),
            "machine": machine_info(), "records": records}


def table(result: dict) -> str:
    lines = [f"{result['set']}: {result['questions']} questions, {result['documents']} documents",
             "filter | docs | mode  | p50 ms | x unfiltered | first ms | kept q | recall@5 | all-ev@5"]
    for name, row in result["summary"].items():
        for mode in MODES:
            m = row[mode]
            fmt = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
            lines.append(f"{name:>6} | {row['documents_passing']:>4} | {mode:<5} | {fmt(m['p50_ms'], '6.1f')} | "
                         f"{fmt(m['p50_vs_unfiltered'], '12.2f')} | {fmt(m['first_query_ms'], '8.1f')} | "
                         f"{m['questions_kept']:>6} | {fmt(m['recall@5'], '8.1f')} | {fmt(m['all_evidence@5'], '8.1f')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", default="lihuaworld", help="development set (default: lihuaworld)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the index is kept")
    p.add_argument("--results", type=Path, default=BENCH_DIR / "results" / "filters",
                   help="folder of the JSON results (default: benchmarks/results/filters)")
    p.add_argument("--rebuild", action="store_true", help="index the set again")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    args = p.parse_args(argv)
    result = run(args.set, args.out, args.rebuild, args.limit)
    args.results.mkdir(parents=True, exist_ok=True)
    path = args.results / f"{args.set}.json"
    path.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(table(result))
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    main()
