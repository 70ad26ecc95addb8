"""Conversations and aggregation measured without a model, on the development sets' halves.

    .venv/bin/python benchmarks/quality/session_chains.py --no-aggregation        # every set, test half
    .venv/bin/python benchmarks/quality/session_chains.py --sets musique_50 --split tune

1. Sessions: the chains of related questions of ``questions/chains/<set>.json`` (test half;
   ``<set>.tune.json``: tune half; made by ``chains.py``, ``--write-chains`` writes them again)
   asked one after another, each turn's top-5 context rendered and its tokens counted with the
   embedder's tokenizer, as ``run_suite.py`` counts them: independent queries against one
   ``index.session()`` per chain, with the systems of :data:`SYSTEMS`. Per chain: context tokens
   (and their parts: chunk text sent in full, graph rows, references), and all-evidence recall
   over the chain (every evidence document of the chain's questions in some turn's top 5).
2. Aggregation: each question of the half in mini mode with and without ``aggregate=True``:
   recall@5 and tokens of the top-5 context.

Indexes are built once per set in ``--out`` (as ``run_suite.py`` builds them) and reused. Raw
records and summaries go to ``benchmarks/results/sessions/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, git_commit, machine_info, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.chains import chains_for  # noqa: E402
from benchmarks.quality.metrics import mean  # noqa: E402
from benchmarks.quality.run_suite import workdir_for  # noqa: E402
from minirag_core.context import render_rows, select_rows  # noqa: E402
from minirag_core.retrieval.session import ADMIT_RATIO  # noqa: E402

CHAINS_DIR = Path(__file__).resolve().parent / "questions" / "chains"
RESULTS_DIR = Path(__file__).resolve().parents[1] / "results" / "sessions"
K = 5
UNBOUNDED = 10**9


def chains_path(name: str, split: str) -> Path:
    """``<set>.json`` (test half), ``<set>.tune.json`` (tune half)."""
    return CHAINS_DIR / (f"{name}.json" if split == devsets.TEST else f"{name}.{split}.json")


def load_chains(data: devsets.Dataset, rewrite: bool, split: str = devsets.TEST) -> tuple[str, list[dict]]:
    path = chains_path(data.name, split)
    if rewrite or not path.exists():
        how, chains = chains_for(data, split)
        CHAINS_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"set": data.name, "split": split, "made_by": how, "chains": chains},
                                   indent=1, ensure_ascii=False) + "\n")
    saved = json.loads(path.read_text())
    return saved["made_by"], saved["chains"]


#: a session sending every chunk, graph row and line not sent before (no admission: the first release)
UNBOUNDED_SESSION = {"admit_ratio": None, "rows_of_new_chunks": False, "skip_repeated_lines": False}
#: how a chain is asked: alone (each question on its own; ``cut``: only the chunks scoring at least
#: that share of the query's best, the control for the session's ``admit_ratio``), or as one
#: session with these options (``{}``: the defaults, chosen on the tune halves by session_tune.py)
SYSTEMS: dict[str, dict | None] = {
    "independent": None,
    "session, every new chunk": UNBOUNDED_SESSION,
    "session, new_chunks=2": {**UNBOUNDED_SESSION, "new_chunks": 2},
    f"session (default: admit_ratio={ADMIT_RATIO}, rows of new chunks)": {},
    "session (default), repeated lines sent in full": {"skip_repeated_lines": False},
    f"independent, cut={ADMIT_RATIO}": {"cut": ADMIT_RATIO}}
BASELINE = "independent"


def _cut(result, share: float):
    """``result`` holding only the chunks scoring at least ``share`` of its best."""
    best = max((c.score for c in result.chunks), default=0.0)
    return dataclasses.replace(result, chunks=[c for c in result.chunks if c.score >= share * best])


def run_chain(index, chain: dict, options: dict | None) -> dict:
    """Ask the chain's turns in order; tokens and documents of each turn's top-5 context, and the
    tokens of its parts: chunk text sent in full, references, graph rows."""
    alone = options is None or "cut" in options
    session = None if alone else index.session(**options)
    count = index.embedder.count_tokens
    tokens, docs, carried, parts, texts = [], [], [], [], {}
    for turn in chain["turns"]:
        if session is None:
            result = index.query(turn["question"], mode="mini", top_k=K, token_budget=UNBOUNDED)
            if options:
                result = _cut(result, options["cut"])
            context, rows, fresh = result.to_context(), select_rows(result), {c.chunk_id for c in result.chunks}
        else:
            shown = session.query(turn["question"], top_k=K, token_budget=UNBOUNDED)
            result, context, rows, fresh, texts = shown.result, shown.to_context(), shown.rows, set(shown.new), shown.texts
            carried.append(shown.carried)
        tokens.append(count(context))
        text = sum(count(texts.get(c.chunk_id, c.text)) for c in result.chunks if c.chunk_id in fresh)
        graph = count(render_rows(rows, [])) if rows.candidates or rows.edges or rows.paths else 0
        parts.append({"chunk_text": text, "graph_rows": graph, "new": len(fresh & {c.chunk_id for c in result.chunks}),
                      "references": sum(c.chunk_id not in fresh for c in result.chunks)})
        docs.append([c.doc_id for c in result.chunks[:K]])
    seen = {d for turn_docs in docs for d in turn_docs}
    wanted = set(chain["evidence"])
    return {"id": chain["id"], "turns": len(chain["turns"]), "tokens": sum(tokens), "tokens_per_turn": tokens,
            "parts_per_turn": parts, "docs": docs, "all_evidence": float(wanted <= seen),
            "evidence_recall": len(wanted & seen) / len(wanted), "carried": carried}


def summarise(records: list[dict]) -> dict:
    """Means over a system's chains, and the tokens' parts over all its turns (follow-ups apart)."""
    parts = [p for r in records for p in r["parts_per_turn"]]
    follow = [p for r in records for p in r["parts_per_turn"][1:]]
    if not records:
        return {"chains": 0, "turns": 0, "tokens_per_chain": 0.0, "all_evidence_recall": 0.0, "evidence_recall": 0.0,
                "chunk_text_per_chain": 0.0, "graph_rows_per_chain": 0.0, "new_chunks_per_follow_up": 0.0,
                "references_per_follow_up": 0.0}
    return {"chains": len(records), "turns": sum(r["turns"] for r in records),
            "tokens_per_chain": mean(r["tokens"] for r in records),
            "all_evidence_recall": 100 * (mean(r["all_evidence"] for r in records) or 0.0),
            "evidence_recall": 100 * (mean(r["evidence_recall"] for r in records) or 0.0),
            "chunk_text_per_chain": sum(p["chunk_text"] for p in parts) / max(len(records), 1),
            "graph_rows_per_chain": sum(p["graph_rows"] for p in parts) / max(len(records), 1),
            "new_chunks_per_follow_up": mean(p["new"] for p in follow),
            "references_per_follow_up": mean(p["references"] for p in follow)}


def run_sessions(index, chains: list[dict], systems: dict[str, dict | None] | None = None) -> dict:
    systems = SYSTEMS if systems is None else systems
    records = {system: [run_chain(index, c, options) for c in chains] for system, options in systems.items()}
    summary = {system: summarise(rs) for system, rs in records.items()}
    base = summary[BASELINE]["tokens_per_chain"]
    for system in systems:
        summary[system]["token_saving_percent"] = 100 * (1 - summary[system]["tokens_per_chain"] / base) if base else 0.0
    return {"summary": summary, "records": records}


def top5(index, question: str, aggregate: bool) -> tuple[list[str], int]:
    result = index.query(question, mode="mini", top_k=2 * K, token_budget=UNBOUNDED, aggregate=aggregate)
    context = dataclasses.replace(result, chunks=result.chunks[:K]).to_context()
    return [c.doc_id for c in result.chunks[:K]], index.embedder.count_tokens(context)


def run_aggregation(index, questions: list[devsets.Question]) -> dict:
    started = time.perf_counter()
    aggregation = index.sources.aggregation()
    seconds = time.perf_counter() - started
    records = []
    for q in questions:
        row: dict = {"id": q.id}
        for system, aggregate in (("mini", False), ("mini+aggregate", True)):
            docs, tokens = top5(index, q.question, aggregate)
            row[system] = {"recall@5": len(set(q.evidence) & set(docs)) / len(q.evidence), "tokens": tokens,
                           "docs": docs}
        records.append(row)
    summary = {system: {"recall@5": 100 * (mean(r[system]["recall@5"] for r in records) or 0.0),
                        "context_tokens": mean(r[system]["tokens"] for r in records)}
               for system in ("mini", "mini+aggregate")}
    levels = sorted({c.level for c in aggregation.clusters.values()})
    summary["clusters"] = {f"level {lv}": sum(c.level == lv for c in aggregation.clusters.values()) for lv in levels}
    summary["cluster_relations"] = len(aggregation.relations)
    summary["seconds_aggregate"] = seconds
    return {"summary": summary, "records": records}


def session_table(results: list[dict]) -> str:
    lines = ["| set | split | chains (turns) | made by | system | tokens/chain | saving | all-evidence recall | "
             "evidence recall | chunk text / graph rows per chain | new / referenced chunks per follow-up |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        s = r["sessions"]["summary"]
        for system, row in s.items():
            lines.append(f"| {r['set']} | {r.get('split', devsets.TEST)} | {row['chains']} ({row['turns']}) | "
                         f"{r['made_by']} | {system} | {row['tokens_per_chain']:.0f} | "
                         f"{row['token_saving_percent']:.1f} % | {row['all_evidence_recall']:.1f} | "
                         f"{row['evidence_recall']:.1f} | {row['chunk_text_per_chain']:.0f} / "
                         f"{row['graph_rows_per_chain']:.0f} | {row['new_chunks_per_follow_up'] or 0:.2f} / "
                         f"{row['references_per_follow_up'] or 0:.2f} |")
    return "\n".join(lines)


def aggregation_table(results: list[dict]) -> str:
    lines = ["| set | questions | recall@5 mini / +aggregate | context tokens mini / +aggregate | change | "
             "clusters | seconds to aggregate |", "|---|---|---|---|---|---|---|"]
    for r in results:
        if "aggregation" not in r:
            continue
        a = r["aggregation"]["summary"]
        plain, lean = a["mini"], a["mini+aggregate"]
        change = 100 * (lean["context_tokens"] / plain["context_tokens"] - 1)
        lines.append(f"| {r['set']} | {len(r['aggregation']['records'])} | {plain['recall@5']:.1f} / "
                     f"{lean['recall@5']:.1f} | {plain['context_tokens']:.0f} / {lean['context_tokens']:.0f} | "
                     f"{change:+.1f} % | {a['clusters']} | {a['seconds_aggregate']:.1f} |")
    return "\n".join(lines)


def table(results: list[dict]) -> str:
    return session_table(results) + "\n\n" + aggregation_table(results)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="lihuaworld,musique_50,pydantic_docs,uv_docs,scrapy_docs,hotpotqa_100")
    p.add_argument("--split", default=devsets.TEST, choices=(devsets.TUNE, devsets.TEST))
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the indexes are built and reused")
    p.add_argument("--write-chains", action="store_true", help="write questions/chains/<set>[.tune].json again")
    p.add_argument("--no-aggregation", action="store_true", help="measure the sessions only")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    configure_threads(args.threads)
    results = []
    for name in [s for s in args.sets.split(",") if s]:
        data = devsets.load(name)
        how, chains = load_chains(data, args.write_chains, args.split)
        index, build = open_corpus_index(workdir_for(args.out, name, None), data.documents)
        started = time.perf_counter()
        results.append({"set": name, "split": args.split, "made_by": how, "build": build.to_dict(),
                        "sessions": run_sessions(index, chains)})
        if not args.no_aggregation:
            questions = [q for q in data.half(args.split) if q.has_evidence]
            results[-1]["aggregation"] = run_aggregation(index, questions)
        results[-1]["seconds_queries"] = time.perf_counter() - started
        index.close()
        print(table(results[-1:]), flush=True)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"session_chains_{args.split}_{git_commit() or 'unknown'}.json"
    out.write_text(json.dumps({"commit": git_commit(), "machine": machine_info(), "k": K, "split": args.split,
                               "systems": SYSTEMS, "sets": results}, indent=1, default=str))
    print(table(results))
    print(f"wrote {out}")
    return results


if __name__ == "__main__":
    main()
