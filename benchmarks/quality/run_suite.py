"""Every development set, every system, one command: MiniRAG's modes against the retrievers a
user would pick instead, on the same chunks, reported on the *test* half of each question set.

    .venv/bin/python benchmarks/quality/run_suite.py                     # all sets in ../shared/data, test halves
    .venv/bin/python benchmarks/quality/run_suite.py --split tune        # the half settings are chosen on
    .venv/bin/python benchmarks/quality/run_suite.py --write-results     # also regenerate RESULTS.md and the README section
    .venv/bin/python benchmarks/quality/run_suite.py --llm ollama:qwen2.5:3b   # the graph built by a model (the paper's setting)

Systems: mini, light, naive (MiniRAG on the embedded default), bm25 (plain ``bm25s``), bm25t (BM25
with the project's tokeniser: normalised dates), hybrid (BM25 + dense, reciprocal-rank fusion with
equal weights and c = 60, as LangChain's ``EnsembleRetriever``), linearrag (the published LinearRAG,
imported from ``../shared/peers/LinearRAG`` when that folder is there: ``linearrag_system.py``), and
mini ablations. Metrics:
evidence recall@k and all-evidence@k (k = 2, 5, 10), answer-in-context@5, tokens of the whole
rendered top-5 context, p50/p95 latency. What is measured is evidence retrieval, not answer accuracy
(``run_benchmark.py --llm`` scores answers with a model).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.baselines import LexicalRanker, dense_rank, reciprocal_rank_fusion  # noqa: E402
from benchmarks.quality.linearrag_system import PEER_DIR, peer_available  # noqa: E402
from benchmarks.common import (  # noqa: E402
    DEFAULT_OUT, SystemCaches, configure_threads, git_commit, machine_info, make_llm, open_corpus_index,
)
from benchmarks.quality.metrics import answer_in_context, mean, percentile  # noqa: E402
from benchmarks.quality.suite_report import plot_suite, readme_section, write_results  # noqa: E402

KS = (2, 5, 10)
CONTEXT_K = 5
MODES = ("mini", "light", "naive")
BASELINES = ("bm25", "bm25t", "hybrid", "li-pg", "linearrag")
#: systems that need something outside this repository, and whether it is there
OPTIONAL = {"linearrag": peer_available}
#: mini with parts of its ranking switched off (RetrievalSettings overrides)
ABLATIONS: dict[str, dict[str, float]] = {
    "mini-no-graph": {"graph_weight": 0.0, "bridge_weight": 0.0},
    "mini-no-bridge": {"bridge_weight": 0.0},
    "mini-no-key-edges": {"key_edges": 0},  # eq. 2 off: paths gain from answer candidates only
    "mini-no-candidates": {"max_answer_candidates": 0},  # eq. 2's answer-candidate entities off
    "mini-graph-only": {"dense_weight": 0.0, "lexical_weight": 0.0},
    "mini-no-lexical": {"lexical_weight": 0.0},
    "mini-no-dense": {"dense_weight": 0.0},
    "mini-no-coverage": {"coverage_weight": 0.0},  # the top chunks re-ordered by relevance alone
    "mini-residual": {"residual_weight": 2.0},  # the opt-in second round (off by default)
}
ALL_SYSTEMS = MODES + BASELINES + tuple(ABLATIONS)
DEFAULT_SYSTEMS = tuple(s for s in ALL_SYSTEMS if s not in OPTIONAL or OPTIONAL[s]())


def question_group(set_name: str, qtype: str) -> str:
    """Per-type table key: MuSiQue's ``3hop1`` counts as ``3hop``; others as given."""
    if qtype[:1].isdigit() and "hop" in qtype:
        return qtype[: qtype.index("hop") + 3]
    return qtype or "all"


class SetRunner:
    """Runs every system on one development set's index."""

    def __init__(self, index, peer_workdir: Path | None = None) -> None:
        from minirag_core.extraction.temporal import with_temporal_tokens

        store = index.graph_store
        self.index = index
        self.chunks = store.chunks(store.chunk_ids())
        texts = {c: a["text"] for c, a in self.chunks.items()}
        self.lexical = {"bm25": LexicalRanker(texts), "bm25t": LexicalRanker(texts, with_temporal_tokens)}
        self._property_graph = None  # LlamaIndex's stock PropertyGraphIndex, built on first use
        self._linearrag = None  # the LinearRAG peer, built on first use in ``peer_workdir``
        self.peer_workdir = peer_workdir
        #: seconds to build each system's own index (systems that build one)
        self.seconds_index: dict[str, float] = {}

    def _baseline(self, system: str, query: str, n: int) -> list[str]:
        if system in self.lexical:
            return self.lexical[system].rank(query, n)
        if system == "hybrid":  # both lists as deep as LangChain's retrievers would return for k = 60
            fused = reciprocal_rank_fusion([self.lexical["bm25"].rank(query, 60), dense_rank(self.index, query, 60)])
            return [c for c, _ in fused[:n]]
        if system == "li-pg":
            if self._property_graph is None:
                from benchmarks.quality.llama_pg_baseline import LlamaPropertyGraphBaseline
                self._property_graph = LlamaPropertyGraphBaseline(self.chunks, self.index.embedder, top_k=n)
            return self._property_graph.rank(query, n)
        if system == "linearrag":
            if self._linearrag is None:
                from benchmarks.quality.linearrag_system import LinearRAGSystem

                texts = {c: a["text"] for c, a in self.chunks.items()}
                self._linearrag = LinearRAGSystem(texts, self.peer_workdir or Path("linearrag.workdir"), top_k=n)
                self.seconds_index[system] = self._linearrag.seconds_index
            return self._linearrag.rank(query, n)
        raise ValueError(f"unknown system {system!r}")

    def run(self, system: str, query: str) -> tuple[list[str], list[str], str]:
        """(doc ids of the ranked chunks, their texts, the rendered top-5 context)."""
        k = max(KS)
        if system in MODES or system in ABLATIONS:
            mode = system if system in MODES else "mini"
            result = self.index.query(query, mode=mode, top_k=k, token_budget=10**9, **ABLATIONS.get(system, {}))
            context = dataclasses.replace(result, chunks=result.chunks[:CONTEXT_K]).to_context()
            return [c.doc_id for c in result.chunks], [c.text for c in result.chunks], context
        ids = self._baseline(system, query, k)
        texts = [self.chunks[c]["text"] for c in ids]
        return [self.chunks[c]["doc_id"] for c in ids], texts, "\n\n".join(texts[:CONTEXT_K])


def score(question: devsets.Question, doc_ids: list[str], texts: list[str]) -> dict:
    record: dict = {"id": question.id, "group": question.type}
    wanted = set(question.evidence)
    for k in KS:
        seen = set(doc_ids[:k])
        record[f"recall@{k}"] = len(wanted & seen) / len(wanted) if wanted else None
        record[f"all_evidence@{k}"] = (1.0 if wanted <= seen else 0.0) if wanted else None
    answers = [a for a in (question.answer, *question.answer_aliases) if a and question.type != "Null"]
    found = [answer_in_context(a, texts[:CONTEXT_K]) for a in answers]
    found = [f for f in found if f is not None]
    record["answer_in_context@5"] = max(found) if found else None
    return record


def aggregate(records: list[dict]) -> dict:
    out: dict = {"n": len(records), "n_evidence": sum(r["recall@5"] is not None for r in records)}
    for key in [f"{m}@{k}" for k in KS for m in ("recall", "all_evidence")] + ["answer_in_context@5"]:
        value = mean(r[key] for r in records)
        out[key] = None if value is None else 100.0 * value
    out["context_tokens"] = mean(r["context_tokens"] for r in records)
    latencies = [r["latency_ms"] for r in records]
    out["p50_ms"], out["p95_ms"] = percentile(latencies, 50), percentile(latencies, 95)
    return out


def workdir_for(out: Path, name: str, llm_spec: str | None) -> Path:
    """The set's index folder: one per extraction (the embedded default, or each model)."""
    if not llm_spec:
        return out / f"{name}.workdir"
    return out / f"{name}.{re.sub(r'[^A-Za-z0-9.]+', '-', llm_spec.split('@')[0]).strip('-')}.workdir"


def evaluate_set(name: str, systems: list[str], split: str, out: Path, rebuild: bool, limit: int | None,
                 llm_spec: str | None = None) -> dict:
    data = devsets.load(name)
    questions = [q for q in data.questions if split == "all" or q.split == split]
    questions = [q for q in questions if q.has_evidence][:limit]
    t0 = time.perf_counter()
    index, build = open_corpus_index(workdir_for(out, name, llm_spec), data.documents, rebuild=rebuild,
                                     llm=make_llm(llm_spec), show_progress=bool(llm_spec))
    runner = SetRunner(index, out / f"{name}.linearrag")
    seconds_build = time.perf_counter() - t0
    for system in systems:  # warm-up: lazy BM25, type pool, first model call
        runner.run(system, questions[0].question if questions else "warm up")
    caches = SystemCaches(index)
    caches.snapshot()
    records: dict[str, list[dict]] = {s: [] for s in systems}
    t1 = time.perf_counter()
    for q in questions:
        for system in systems:  # interleaved, so machine noise hits every system alike
            caches.use(system)
            start = time.perf_counter()
            doc_ids, texts, context = runner.run(system, q.question)
            latency = (time.perf_counter() - start) * 1000
            record = score(q, doc_ids, texts)
            record.update(latency_ms=latency, context_tokens=index.embedder.count_tokens(context),
                          group=question_group(name, q.type), docs=list(dict.fromkeys(doc_ids)))
            records[system].append(record)
    groups = sorted({r["group"] for r in records[systems[0]]}) if systems else []
    summary = {s: {"overall": aggregate(records[s]),
                   **{g: aggregate([r for r in records[s] if r["group"] == g]) for g in groups}} for s in systems}
    return {"set": name, "split": split, "n_questions": len(questions), "groups": groups, "summary": summary,
            "index": {**build.to_dict(), **index.stats()}, "seconds_index": seconds_build,
            "seconds_queries": time.perf_counter() - t1, "records": records,
            "seconds_index_by_system": {"mini": build.seconds_total, **runner.seconds_index},
            "peer_index": runner._linearrag.stats() if runner._linearrag else None}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default=None, help="comma-separated development sets (default: every set found)")
    p.add_argument("--split", choices=("test", "tune", "all"), default="test")
    p.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                   help=f"comma-separated, from {', '.join(ALL_SYSTEMS)} (default: every system whose code is there)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--rebuild", action="store_true", help="index every set again from scratch")
    p.add_argument("--limit", type=int, default=None, help="first N questions of each set (smoke runs)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1; 0 = torch's default)")
    p.add_argument("--write-results", action="store_true", help="regenerate RESULTS.md and the README section")
    p.add_argument("--llm", default=None, help="ollama:MODEL[@host]: build each set's graph and map the questions "
                                               "with this model (its own workdirs; results in --out only)")
    p.add_argument("--except", dest="excluded", default="",
                   help="comma-separated systems to leave out of --systems (e.g. li-pg,linearrag: the peers that "
                        "build indexes of their own and take longest)")
    args = p.parse_args(argv)
    if args.llm and args.write_results:
        p.error("--write-results keeps RESULTS.md for the embedded default; a --llm run writes --out only")
    args.sets = [s for s in (args.sets.split(",") if args.sets else devsets.available()) if s]
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    excluded = [s.strip() for s in args.excluded.split(",") if s.strip()]
    named = list(args.systems) != list(DEFAULT_SYSTEMS)
    args.flags = (["--systems", ",".join(args.systems)] if named else []) + (["--except", ",".join(excluded)]
                                                                            if excluded else [])
    args.systems = [s for s in args.systems if s not in excluded]
    unknown = [s for s in args.systems + excluded if s not in ALL_SYSTEMS]
    if unknown:
        p.error(f"unknown systems {unknown}; choose from {', '.join(ALL_SYSTEMS)}")
    for system in [s for s in args.systems if s in OPTIONAL and not OPTIONAL[s]()]:
        print(f"note: skipping {system}: LinearRAG's code is not at {PEER_DIR} (set MINIRAG_LINEARRAG_DIR)")
        args.systems.remove(system)
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    configure_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    sets = [evaluate_set(name, args.systems, args.split, args.out, args.rebuild, args.limit, args.llm)
            for name in args.sets]
    results = {"commit": git_commit(), "machine": machine_info(), "split": args.split, "systems": args.systems,
               "llm": args.llm, "flags": args.flags,
               "ablations": ABLATIONS, "ks": KS, "out": str(args.out), "seconds_total": time.perf_counter() - started, "sets": sets}
    (args.out / "suite_results.json").write_text(json.dumps(results, indent=1, default=str))
    plot_suite(results, args.out / "suite_recall.png")
    section = readme_section(results)
    print(section)
    if args.write_results:
        write_results(results, section)
    return results


if __name__ == "__main__":
    main()
