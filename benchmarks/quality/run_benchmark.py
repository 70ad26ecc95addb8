"""MiniRAG (mini / light / naive) against BM25 on LiHuaWorld, on one index, in one run.

    .venv/bin/python benchmarks/quality/run_benchmark.py                 # whole dev set, embedded default
    .venv/bin/python benchmarks/quality/run_benchmark.py --rebuild       # re-index from scratch
    .venv/bin/python benchmarks/quality/run_benchmark.py --questions other.json --limit 50
    .venv/bin/python benchmarks/quality/run_benchmark.py --llm ollama:qwen2.5:3b   # + answer accuracy

Builds (or reuses) one whole-corpus index on the embedded default (no LLM), runs every
system over the same chunks with top 5 within a 6000-token budget, and writes
``<out>/results.json`` and ``<out>/recall.png``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import (  # noqa: E402
    DEFAULT_OUT, DEFAULT_WORKDIR, TOKEN_BUDGET, TOP_K, WARMUP_QUERY, BM25Baseline, SystemCaches,
    configure_threads, machine_info, make_llm, open_corpus_index, peak_rss_mb, result_sessions,
)
from benchmarks.quality.lihuaworld import corpus_bytes, default_dir, default_questions_path, load_corpus_and_questions  # noqa: E402
from benchmarks.quality.metrics import aggregate_by_type, exact_match, normalise_answer, normalised_match, score_question  # noqa: E402

SYSTEMS = ("mini", "light", "naive", "bm25")
EXTRA_SYSTEMS = ("bm25t",)  # ablation: BM25 with the core's date normalisation (mini's lexical signal)
TYPES = ("Single", "Multi", "Null")
NULL_PHRASES = ("insufficient information", "don t know", "do not know", "not enough information",
                "no information", "cannot be determined", "not mentioned", "does not mention",
                "doesn t mention", "not provided", "unknown")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=None, help="LiHuaWorld folder (default $LIHUAWORLD_DIR or "
                   "../shared/data/lihuaworld from the repo root)")
    p.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="index workdir (reused if it holds the corpus)")
    p.add_argument("--rebuild", action="store_true", help="delete the workdir and index the corpus again")
    p.add_argument("--questions", type=Path, default=None, help="question file (default <data>/qa_dev.json)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for results.json and recall.png")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help="comma-separated subset of " + ",".join(SYSTEMS + EXTRA_SYSTEMS))
    p.add_argument("--llm", default=None, help="ollama:MODEL[@host] to also generate and score answers")
    p.add_argument("--answer-systems", default=None, help="systems to generate answers for (default: --systems)")
    p.add_argument("--limit", type=int, default=None, help="first N questions only")
    p.add_argument("--top-k", type=int, default=TOP_K)
    p.add_argument("--token-budget", type=int, default=TOKEN_BUDGET)
    p.add_argument("--progress", action="store_true", help="progress bar while indexing")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1; 0 = torch's default)")
    args = p.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    bad = [s for s in args.systems if s not in SYSTEMS + EXTRA_SYSTEMS]
    if bad or not args.systems:
        p.error(f"unknown systems {bad}; choose from {', '.join(SYSTEMS + EXTRA_SYSTEMS)}")
    args.answer_systems = ([s.strip() for s in args.answer_systems.split(",") if s.strip()]
                           if args.answer_systems else list(args.systems))
    return args


def run_system(index, bm25, system: str, question: str, top_k: int, token_budget: int):
    if system in bm25:
        return bm25[system].query(question, top_k=top_k, token_budget=token_budget)
    return index.query(question, mode=system, top_k=top_k, token_budget=token_budget)


def evaluate_retrieval(index, bm25, systems, questions, top_k, token_budget):
    """Per-question records per system. Systems are interleaved per question so that machine
    noise (other processes on the 2 cores) hits every system alike; each keeps its own copy of
    the embedder's short-text cache (see ``SystemCaches``)."""
    for system in systems:  # warm-up: lazy BM25 build, embedding model first call, type pool
        run_system(index, bm25, system, WARMUP_QUERY, top_k, token_budget)
    caches = SystemCaches(index)
    caches.snapshot()
    records = {s: [] for s in systems}
    for q in questions:
        for system in systems:
            caches.use(system)  # no system gets the question's embedding for free from another
            t0 = time.perf_counter()
            result = run_system(index, bm25, system, q.question, top_k, token_budget)
            ms = (time.perf_counter() - t0) * 1000
            rec = score_question(q.evidence, q.answer, q.type, result_sessions(result),
                                 [c.text for c in result.chunks], [c.n_tokens for c in result.chunks], ms,
                                 n_unknown_evidence=len(q.unknown_evidence))
            rec.update(id=q.id, sessions=result_sessions(result), notes=list(result.notes),
                       via=[c.via for c in result.chunks])
            records[system].append(rec)
    return records


def is_null_reply(text: str) -> bool:
    norm = " " + normalise_answer(text) + " "
    return any(f" {p} " in norm for p in NULL_PHRASES)


def evaluate_answers(workdir: Path, llm, systems, questions, top_k, token_budget, bm25):
    """Generate answers with ``index.answer`` on an index opened with the model and score them."""
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.llm.prompts import build_answer_prompt

    index = MiniRAGIndex(workdir, llm=llm)
    out = {}
    for system in systems:
        rows = []
        for q in questions:
            t0 = time.perf_counter()
            try:
                if system in bm25:
                    result = bm25[system].query(q.question, top_k=top_k, token_budget=token_budget)
                    reply = llm.complete(build_answer_prompt(q.question, result.to_context(), "A short phrase"))
                else:
                    reply = index.answer(q.question, mode=system, response_type="A short phrase",
                                         top_k=top_k, token_budget=token_budget).text
                error = None
            except Exception as exc:  # noqa: BLE001 - one failed call must not end the run
                reply, error = "", repr(exc)
            seconds = time.perf_counter() - t0
            em = exact_match(reply, q.answer)
            nm = normalised_match(reply, q.answer)
            if q.type == "Null":
                nm = max(nm, 1.0 if is_null_reply(reply) else 0.0)
            rows.append({"id": q.id, "type": q.type, "reply": reply, "exact": em, "normalised": nm,
                         "seconds": seconds, "error": error})
        summary = {}
        for t in ("overall",) + TYPES:
            sub = rows if t == "overall" else [r for r in rows if r["type"] == t]
            if sub:
                summary[t] = {"n": len(sub), "exact": 100 * sum(r["exact"] for r in sub) / len(sub),
                              "normalised": 100 * sum(r["normalised"] for r in sub) / len(sub),
                              "errors": sum(r["error"] is not None for r in sub)}
        out[system] = {"summary": summary, "rows": rows}
    return out


def _f(value, digits=1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown_table(summary: dict, systems) -> str:
    head = ("| system | questions (with evidence) | recall@5 | all-evidence@5 | answer-in-context@5 "
            "| context tokens | p50 ms | p95 ms |")
    lines = [head, "|" + "---|" * 8]
    for system in systems:
        for group in ("overall", "Single", "Multi"):
            agg = summary[system].get(group)
            if agg is None:
                continue
            lines.append(f"| {system} {'' if group == 'overall' else group} | {agg['n']} ({agg['n_recall']}) | {_f(agg['recall@5'])} "
                         f"| {_f(agg['all_evidence@5'])} | {_f(agg['answer_in_context@5'])} "
                         f"| {_f(agg['context_tokens'], 0)} | {_f(agg['p50_ms'], 2)} | {_f(agg['p95_ms'], 2)} |")
    return "\n".join(lines)


def plot_recall(summary: dict, systems, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    groups = ["overall", "Single", "Multi"]
    width = 0.8 / max(1, len(systems))
    x = np.arange(len(groups))
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    for i, system in enumerate(systems):
        values = [summary[system].get(g, {}).get("recall@5") or 0.0 for g in groups]
        bars = ax.bar(x + (i - (len(systems) - 1) / 2) * width, values, width, label=system)
        ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)
    counts = [max((summary[s].get(g, {}).get("n_recall") or 0) for s in systems) for g in groups]
    ax.set_xticks(x, [f"{g} (n={n})" for g, n in zip(groups, counts)])
    ax.set_ylabel("evidence recall@5 (%)")
    ax.set_ylim(0, 105)
    ax.set_title("LiHuaWorld dev: evidence recall@5 by system and question type")
    ax.legend(ncols=len(systems), fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> dict:
    args = parse_args(argv)
    t_start = time.perf_counter()
    threads = configure_threads(args.threads)
    data = args.data.resolve() if args.data else default_dir()
    docs, questions = load_corpus_and_questions(data, args.questions, args.limit)
    args.out.mkdir(parents=True, exist_ok=True)

    print(f"corpus: {len(docs)} sessions from {data}; questions: {len(questions)} "
          f"from {args.questions or default_questions_path(data)}", flush=True)
    index, build = open_corpus_index(args.workdir, docs, rebuild=args.rebuild, show_progress=args.progress)
    stats = index.stats()
    print(f"index {'reused' if build.reused else 'built'} in {build.seconds_total:.1f} s "
          f"(open {build.seconds_open:.1f} s + insert {build.seconds_insert:.1f} s); "
          f"{stats}; {build.index_bytes / 1e6:.1f} MB on disk (corpus {corpus_bytes(data) / 1e6:.2f} MB)", flush=True)

    bm25: dict[str, BM25Baseline] = {}  # lexical baselines over the index's own chunks
    t_bm25 = 0.0
    for name in EXTRA_SYSTEMS + ("bm25",):
        if name in args.systems or (args.llm and name in args.answer_systems):
            t0 = time.perf_counter()
            bm25[name] = BM25Baseline.from_index(index, temporal=name == "bm25t")
            t_bm25 += time.perf_counter() - t0

    t0 = time.perf_counter()
    records = evaluate_retrieval(index, bm25, args.systems, questions, args.top_k, args.token_budget)
    t_queries = time.perf_counter() - t0
    summary = {s: aggregate_by_type(records[s], TYPES) for s in args.systems}

    table = markdown_table(summary, args.systems)
    print()
    print(table)
    print()
    print(f"build: {build.seconds_total:.1f} s ({'reused workdir' if build.reused else 'fresh'}), "
          f"index {build.index_bytes / 1e6:.1f} MB on disk; BM25 index {t_bm25 * 1000:.0f} ms; "
          f"queries {t_queries:.1f} s for {len(questions)} questions x {len(args.systems)} systems")

    answers = None
    if args.llm:
        llm = make_llm(args.llm)
        print(f"generating answers with {llm.name} for {', '.join(args.answer_systems)} ...", flush=True)
        answers = evaluate_answers(args.workdir, llm, args.answer_systems, questions, args.top_k,
                                   args.token_budget, bm25)
        print("\n| system | exact | normalised match | Single | Multi | Null |\n|---|---|---|---|---|---|")
        for system, res in answers.items():
            s = res["summary"]
            print(f"| {system} | {_f(s['overall']['exact'])} | {_f(s['overall']['normalised'])} "
                  + " | ".join(_f(s.get(t, {}).get("normalised")) for t in TYPES) + " |")
    else:
        print("answer accuracy: skipped (no --llm given; e.g. --llm ollama:qwen2.5:3b)")

    png = args.out / "recall.png"
    plot_recall(summary, args.systems, png)
    results = {
        "dataset": {"data_dir": str(data), "questions_file": str(args.questions or default_questions_path(data)),
                    "n_sessions": len(docs), "corpus_bytes": corpus_bytes(data), "n_questions": len(questions),
                    "types": {t: sum(q.type == t for q in questions) for t in TYPES},
                    "repairs": {q.id: list(q.repairs) for q in questions if q.repairs},
                    "unknown_evidence": {q.id: list(q.unknown_evidence) for q in questions if q.unknown_evidence}},
        "settings": {"systems": args.systems, "top_k": args.top_k, "token_budget": args.token_budget,
                     "workdir": str(args.workdir), "limit": args.limit, "llm": args.llm,
                     "torch_threads": threads, "per_system_embedding_cache": SystemCaches(index).available,
                     "retrieval_settings": index.settings.to_dict(), "chunk_tokens": index.chunk_tokens,
                     "chunk_overlap": index.chunk_overlap, "embedding_model": index.embedder.name,
                     "extractor": getattr(index.extractor, "name", None),
                     "query_mapper": type(index.query_mapper).__name__},
        "index": {**build.to_dict(), **stats, "bm25_build_seconds": t_bm25},
        "summary": summary,
        "table_markdown": table,
        "per_question": records,
        "answers": answers if answers is not None else "skipped: no --llm",
        "timing": {"queries_seconds": t_queries, "total_seconds": time.perf_counter() - t_start,
                   "peak_rss_mb": peak_rss_mb()},
        "machine": machine_info(),
    }
    (args.out / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str))
    print(f"wrote {args.out / 'results.json'} and {png}; total {results['timing']['total_seconds']:.1f} s")
    return results


if __name__ == "__main__":
    main()
