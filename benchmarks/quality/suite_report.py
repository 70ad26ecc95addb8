"""Tables, the picture and the README/RESULTS text of ``run_suite.py``, all from its results."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
START, END = "<!-- benchmark:start -->", "<!-- benchmark:end -->"
BASELINES = ("bm25", "bm25t", "hybrid", "naive", "li-pg", "linearrag")


def _f(value, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def overall_table(entry: dict) -> str:
    rows = ["| system | recall@2 | recall@5 | recall@10 | all-evidence@5 | answer-in-context@5 | context tokens "
            "| p50 ms | p95 ms |", "|---|---|---|---|---|---|---|---|---|"]
    for system, by_group in entry["summary"].items():
        o = by_group["overall"]
        name = f"**{system}**" if system == "mini" else system
        rows.append(f"| {name} | {_f(o['recall@2'])} | {_f(o['recall@5'])} | {_f(o['recall@10'])} | "
                    f"{_f(o['all_evidence@5'])} | {_f(o['answer_in_context@5'])} | {_f(o['context_tokens'], 0)} | "
                    f"{_f(o['p50_ms'], 0)} | {_f(o['p95_ms'], 0)} |")
    return "\n".join(rows)


def group_table(entry: dict) -> str:
    groups = entry["groups"]
    first = next(iter(entry["summary"].values()))
    head = " | ".join(f"{g} (n={first[g]['n_evidence']})" for g in groups)
    rows = [f"| system (recall@5 / all-evidence@5) | {head} |", "|---|" + "---|" * len(groups)]
    for system, by_group in entry["summary"].items():
        cells = " | ".join(f"{_f(by_group[g]['recall@5'])} / {_f(by_group[g]['all_evidence@5'])}" for g in groups)
        rows.append(f"| {system} | {cells} |")
    return "\n".join(rows)


def paired_interval(ours: list[dict], theirs: list[dict], key: str, rounds: int = 5000,
                    seed: int = 0) -> tuple[float, float, float]:
    """Mean per-question difference ``ours - theirs`` of ``key`` (points) with a 95 % paired
    bootstrap interval (questions resampled with replacement, a fixed seed)."""
    import numpy as np

    diffs = np.array([100.0 * (a[key] - b[key]) for a, b in zip(ours, theirs)])
    draws = np.random.default_rng(seed).integers(0, len(diffs), size=(rounds, len(diffs)))
    means = diffs[draws].mean(axis=1)
    return float(diffs.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def interval_table(entry: dict) -> str:
    """mini minus the best baseline per group (chosen by recall@5), with 95 % intervals: how
    much a test half of this size can tell."""
    records = entry.get("records", {})
    baselines = [s for s in BASELINES if s in records]
    if "mini" not in records or not baselines:
        return ""
    rows = ["| group (n) | best baseline | recall@5: mini - baseline [95 % CI] | all-evidence@5 [95 % CI] |",
            "|---|---|---|---|"]
    for group in ["overall", *entry["groups"]]:
        keep = [i for i, r in enumerate(records["mini"]) if group == "overall" or r["group"] == group]
        best = max(baselines, key=lambda s: entry["summary"][s][group]["recall@5"] or 0.0)
        cells = []
        for key in ("recall@5", "all_evidence@5"):
            mine = [records["mini"][i] for i in keep]
            theirs = [records[best][i] for i in keep]
            mean_diff, low, high = paired_interval(mine, theirs, key)
            cells.append(f"{mean_diff:+.1f} [{low:+.1f}, {high:+.1f}]")
        rows.append(f"| {group} ({len(keep)}) | {best} | {cells[0]} | {cells[1]} |")
    return "\n".join(rows)


def index_sentence(entry: dict) -> str:
    """Seconds each system took to build its own index, with p50 latency, from the run."""
    seconds = entry.get("seconds_index_by_system") or {}
    parts = []
    for system, value in seconds.items():
        reused = " (reused: opening only)" if system == "mini" and entry["index"].get("reused") else ""
        p50 = entry["summary"].get(system, {}).get("overall", {}).get("p50_ms")
        parts.append(f"{system} {value:.0f} s{reused}, p50 {_f(p50, 0)} ms")
    return ("Index build: " + "; ".join(parts) + ".") if len(parts) > 1 else ""


def lead_sentence(entry: dict) -> str:
    """Where mini stands against the best baseline, and what each ablation costs it, from the numbers."""
    summary = {s: g["overall"] for s, g in entry["summary"].items()}
    if "mini" not in summary:
        return ""
    mini = summary["mini"]["recall@5"]
    baselines = {s: summary[s]["recall@5"] for s in BASELINES if s in summary}
    parts = []
    if baselines:
        best = max(baselines, key=lambda s: baselines[s])
        parts.append(f"mini {_f(mini)} recall@5 against the best baseline {best} {_f(baselines[best])} "
                     f"({mini - baselines[best]:+.1f})")
        all_ev = {s: summary[s]["all_evidence@5"] for s in baselines}
        best_all = max(all_ev, key=lambda s: all_ev[s] or 0.0)
        if summary["mini"]["all_evidence@5"] is not None and all_ev[best_all] is not None:
            parts.append(f"all-evidence@5 {_f(summary['mini']['all_evidence@5'])} against {best_all} "
                         f"{_f(all_ev[best_all])} ({summary['mini']['all_evidence@5'] - all_ev[best_all]:+.1f})")
    for ablation, label in [("mini-no-graph", "the graph (paths and bridges)"), ("mini-no-bridge", "bridges"),
                            ("mini-no-key-edges", "eq. 2 key edges"), ("mini-no-candidates", "answer candidates"),
                            ("mini-no-coverage", "entity coverage"), ("mini-no-lexical", "the BM25 signal"),
                            ("mini-no-dense", "the dense signal")]:
        if ablation in summary:
            parts.append(f"{label} adds {mini - summary[ablation]['recall@5']:+.1f}")
    if "mini-graph-only" in summary:
        parts.append(f"the graph term alone ranks to {_f(summary['mini-graph-only']['recall@5'])}")
    return "; ".join(parts) + "."


def reused_note(results: dict) -> str:
    """A clause saying how many sets reused an index built by an earlier run (their minutes are then
    the questions' alone, while a first run also builds every index); empty when none did."""
    reused = [s for s in results.get("sets", []) if s.get("index", {}).get("reused")]
    if not reused:
        return ""
    which = "every index" if len(reused) == len(results["sets"]) else f"{len(reused)} of {len(results['sets'])} indexes"
    return f", {which} built by an earlier run"


def readme_section(results: dict) -> str:
    commit = (results.get("commit") or "uncommitted")[:7]
    command = " ".join([f"--llm {results['llm']}" if results.get("llm") else "--write-results",
                        *results.get("flags", [])])
    lines = [f"Measured at commit `{commit}` by `.venv/bin/python benchmarks/quality/run_suite.py {command}` "
             f"({results['seconds_total'] / 60:.1f} min on a {results['machine'].get('cpu_count', '?')}-core machine"
             f"{reused_note(results)}, "
             + (f"graph built and questions mapped by `{results['llm']}`). " if results.get("llm") else
                "embedded default, no model). ")
             + f"**What is measured:** evidence retrieval on the *{results['split']}* "
             "half of each question set (split by a fixed hash of the question; settings are chosen on the other "
             "half): recall@k is the share of a question's evidence documents among the documents of the top k "
             "chunks, all-evidence@k the share of questions with every evidence document there, answer-in-context@5 "
             "whether the gold answer appears in the top 5 chunks. Not answer accuracy: no model judged answers. "
             "Context tokens count the whole top-5 context as a model would read it (for mini: chunks plus "
             "reasoning paths, key relationships and answer candidates). bm25t is BM25 with the project's "
             "tokeniser; hybrid is BM25 + dense fused by reciprocal rank (c = 60, equal weights, as LangChain's "
             "`EnsembleRetriever`); li-pg is LlamaIndex's own `PropertyGraphIndex` with its LLM-free "
             "`ImplicitPathExtractor` and `VectorContextRetriever` on the same chunks and embedding model (with "
             "implicit edges only, its vector store holds no entity nodes, so it returns next/previous-chunk "
             "triplets whatever the query, and nothing when every document is one chunk, since it skips source "
             "edges: that is what the stock LLM-free setup gives); linearrag is the published LinearRAG (ICLR 2026), "
             "the authors' unmodified code imported from `../shared/peers/LinearRAG`, retrieval only, with the "
             "authors' `run.py` defaults and the same embedding model and spaCy pipeline as mini, on the same "
             "chunks shuffled with a fixed seed before it numbers them (it links passage i to i+1); "
             "`mini-*` rows switch parts of mini's ranking "
             "off (`mini-no-graph`: eq. 3 path scores and bridges off; `mini-no-bridge`: bridges off; "
             "`mini-no-key-edges`: no eq. 2 key edges, so paths gain from answer candidates only; "
             "`mini-no-candidates`: no answer-candidate entities; "
             "`mini-no-coverage`: the entity coverage of `retrieval/extensions/aspect_coverage.py` off; "
             "`mini-graph-only`: dense and BM25 weights zero) or on (`mini-residual`: the opt-in second "
             "retrieval round of `retrieval/extensions/residual.py`, `residual_weight=2.0`).", ""]
    for entry in results["sets"]:
        lines += [f"**{entry['set']}** ({entry['n_questions']} questions with evidence, "
                  f"{entry['index'].get('chunks', '?')} chunks): {lead_sentence(entry)}", "",
                  overall_table(entry), "", group_table(entry), ""]
        if index_sentence(entry):
            lines += [index_sentence(entry), ""]
        intervals = interval_table(entry)
        if intervals:
            lines += ["Paired bootstrap (questions resampled, 5,000 rounds): mini against the best baseline of "
                      "each group.", "", intervals, ""]
    lines.append("![recall@5 by system and set](benchmarks/suite_recall.png)")
    return "\n".join(lines)


HEADLINE_SYSTEMS = ("mini", "light", "naive", "bm25t", "hybrid", "linearrag")


def readme_headline(results: dict) -> str:
    """The README's one table: recall@5 / all-evidence@5 of mini and the main baselines on each set,
    with the command that measured it; the rest stays in ``benchmarks/RESULTS.md``."""
    commit = (results.get("commit") or "uncommitted")[:7]
    command = " ".join([f"--llm {results['llm']}" if results.get("llm") else "--write-results",
                        *results.get("flags", [])])
    sets = results["sets"]
    head = " | ".join(f"{e['set']} ({e['n_questions']} q, {e['index'].get('chunks', '?')} chunks)" for e in sets)
    rows = [f"| recall@5 / all-evidence@5 | {head} |", "|---|" + "---|" * len(sets)]
    for system in HEADLINE_SYSTEMS:
        if not all(system in e["summary"] for e in sets):
            continue
        cells = " | ".join(f"{_f(e['summary'][system]['overall']['recall@5'])} / "
                           f"{_f(e['summary'][system]['overall']['all_evidence@5'])}" for e in sets)
        rows.append(f"| {'**mini**' if system == 'mini' else system} | {cells} |")
    return "\n".join([f"Evidence retrieval on the {results['split']} half of each set, embedded default"
                      + (f" (graph and query mapping by `{results['llm']}`)" if results.get("llm") else ", no model")
                      + f", commit `{commit}`:", "", *rows, "",
                      f"Measured by `.venv/bin/python benchmarks/quality/run_suite.py {command}` "
                      f"({results['seconds_total'] / 60:.1f} min, {results['machine'].get('cpu_count', '?')} cores"
                      f"{reused_note(results)}); "
                      "every system, ablation, question group and interval: "
                      "[benchmarks/RESULTS.md](benchmarks/RESULTS.md)."])


def write_results(results: dict, section: str) -> None:
    """``benchmarks/RESULTS.md`` becomes the section; the README's benchmark block gets its headline."""
    (REPO / "benchmarks" / "RESULTS.md").write_text("# Benchmark results\n\n" + section + "\n", encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    if START not in readme or END not in readme:
        raise SystemExit(f"README.md has no {START} ... {END} block to replace")
    block = f"{START}\n{readme_headline(results)}\n{END}"
    readme = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: block, readme, flags=re.DOTALL)
    (REPO / "README.md").write_text(readme, encoding="utf-8")
    image = REPO / "benchmarks" / "suite_recall.png"
    source = Path(results.get("out", REPO / "benchmarks" / "out")) / "suite_recall.png"
    if source.exists():
        image.write_bytes(source.read_bytes())


def plot_suite(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    sets = [e["set"] for e in results["sets"]]
    systems = [s for s in results["systems"] if not s.startswith("mini-")]
    width = 0.8 / max(1, len(systems))
    x = np.arange(len(sets))
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=110)
    for i, system in enumerate(systems):
        values = [e["summary"][system]["overall"]["recall@5"] or 0.0 for e in results["sets"]]
        bars = ax.bar(x + (i - (len(systems) - 1) / 2) * width, values, width, label=system)
        ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
    ax.set_xticks(x, [f"{s} ({results['split']} half)" for s in sets])
    ax.set_ylabel("evidence recall@5 (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Evidence recall@5 by system and development set")
    ax.legend(ncols=len(systems), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":  # regenerate RESULTS.md and the README block from a saved run
    import json
    import sys

    if len(sys.argv) != 2:
        raise SystemExit("usage: suite_report.py OUT/suite_results.json")
    saved = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    write_results(saved, readme_section(saved))
