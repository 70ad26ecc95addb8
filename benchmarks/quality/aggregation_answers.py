"""Answers by a real small model from mini contexts with and without the aggregation layer.

    .venv/bin/python benchmarks/quality/aggregation_answers.py --resume \
        --sets musique_50,hotpotqa_100,lihuaworld,pydantic_docs --token-budget 300 --max-new-tokens 32
    .venv/bin/python benchmarks/quality/aggregation_answers.py --table benchmarks/results/sessions/FILE.json

Every test-half question with a gold answer is asked in mini mode (top 5, ``--token-budget``
tokens of chunk text) twice: ``mini`` (``aggregate=False``: the key-relationship and path
tables) and ``mini+aggregate`` (``aggregate=True``: LeanRAG's clusters, their relations and the
paths inside them). The chunks are the same in both (the option changes only the graph evidence
shown), so recall@5 is too; the model (Gemma 3 270M by default, llama.cpp, one thread, greedy)
answers each context with MiniRAG's answer prompt, as ``session_answers.py`` does.

Per answer: the context's tokens (the model's tokenizer), llama.cpp's prompt tokens, seconds,
whether the reply holds the gold answer and token F1, and the recall of the question's evidence
documents in the context's chunks. Sets are taken in the order given; the report is written
after every question (``--resume`` keeps the questions it holds).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.answer_scoring import bootstrap_ci, rate_with_ci  # noqa: E402
from benchmarks.quality.model_answers import (Answerer, finish_run, gold_answers, model_run_parser,  # noqa: E402
                                              printed_table, start_run, write_report)
from benchmarks.quality.run_suite import workdir_for  # noqa: E402
from minirag_core.llm.prompts import build_answer_prompt  # noqa: E402

SETS = ("musique_50", "hotpotqa_100", "lihuaworld", "pydantic_docs")
#: condition -> the ``aggregate`` option of the query
CONDITIONS = {"mini": False, "mini+aggregate": True}
K = 5


def evidence_recall(evidence: Sequence[str], docs: Sequence[str]) -> float | None:
    """Share of the evidence documents among ``docs`` (None for a question without evidence)."""
    return len(set(evidence) & set(docs)) / len(set(evidence)) if evidence else None


def answer_question(answerer: Answerer, index, question: devsets.Question, gold: list[str], budget: int) -> dict:
    """One question answered from each condition's context."""
    row: dict = {"id": question.id, "question": question.question, "gold": gold}
    for condition, aggregate in CONDITIONS.items():
        result = index.query(question.question, mode="mini", top_k=K, token_budget=budget, aggregate=aggregate)
        context = result.to_context()
        docs = [c.doc_id for c in result.chunks]
        row[condition] = {"context_tokens": answerer.count(context), "docs": docs,
                          "recall@5": evidence_recall(question.evidence, docs),
                          **answerer.answer(build_answer_prompt(question.question, context), gold)}
    return row


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise(rows: list[dict]) -> dict:
    """Per condition: questions, correct (with its 95% CI), token F1, mean context and prompt
    tokens, recall@5 and seconds; and the paired difference in correct (aggregate less mini)."""
    out: dict = {}
    for condition in CONDITIONS:
        answers = [r[condition] for r in rows if condition in r]
        recalls = [a["recall@5"] for a in answers if a["recall@5"] is not None]
        out[condition] = {
            "questions": len(answers), "correct": _mean([a["correct"] for a in answers]),
            "correct_ci95": bootstrap_ci([a["correct"] for a in answers]),
            "f1": _mean([a["f1"] for a in answers]), "recall@5": _mean(recalls),
            **{key: _mean([a[key] for a in answers]) for key in ("context_tokens", "prompt_tokens", "seconds")}}
    both = [r for r in rows if all(c in r for c in CONDITIONS)]
    plain, lean = CONDITIONS
    differences = [r[lean]["correct"] - r[plain]["correct"] for r in both]
    out["paired"] = {"questions": len(both), "correct_difference": _mean(differences),
                     "correct_difference_ci95": bootstrap_ci(differences),
                     "same_reply": sum(r[plain]["reply"].strip() == r[lean]["reply"].strip() for r in both)}
    return out


def _number(value: float | None, scale: float = 1.0, digits: int = 0) -> str:
    return "-" if value is None else f"{scale * value:.{digits}f}"


def table(report: dict) -> str:
    rows = ["| set | condition | questions | correct % [95% CI] | token F1 % | context tokens | prompt tokens | "
            "recall@5 % | s/answer |", "|---|---|---|---|---|---|---|---|---|"]
    paired = ["| set | questions | correct, aggregate less mini (points) [95% CI] | same reply |", "|---|---|---|---|"]
    for name, entry in report["sets"].items():
        summary = summarise(entry["questions"])
        for condition in CONDITIONS:
            s = summary[condition]
            rows.append(f"| {name} | {condition} | {s['questions']} | {rate_with_ci(s['correct'], s['correct_ci95'])} | "
                        f"{_number(s['f1'], 100, 1)} | {_number(s['context_tokens'])} | "
                        f"{_number(s['prompt_tokens'])} | {_number(s['recall@5'], 100, 1)} | "
                        f"{_number(s['seconds'], digits=1)} |")
        p = summary["paired"]
        paired.append(f"| {name} | {p['questions']} | "
                      f"{rate_with_ci(p['correct_difference'], p['correct_difference_ci95'], signed=True)} | "
                      f"{p['same_reply']} |")
    return "\n".join(rows) + "\n\n" + "\n".join(paired)


def main(argv=None) -> dict:
    if argv is None and printed_table(table):
        return {}
    args = model_run_parser(__doc__, SETS, "questions").parse_args(argv)
    answerer, path, report = start_run(args, "aggregation_answers")
    for name in [s for s in args.sets.split(",") if s]:
        data = devsets.load(name)
        gold = gold_answers(data)
        questions = [q for q in data.half(devsets.TEST) if q.question in gold][: args.limit_questions]
        entry = report["sets"].setdefault(name, {"questions": []})
        done = {r["id"] for r in entry["questions"]}
        if all(q.id in done for q in questions):
            continue
        index, _ = open_corpus_index(workdir_for(args.index_out, name, None), data.documents)
        for q in questions:
            if q.id in done:
                continue
            entry["questions"].append(answer_question(answerer, index, q, gold[q.question], args.token_budget))
            entry["summary"] = summarise(entry["questions"])
            write_report(path, report)
            print(f"{name} {q.id} done", flush=True)
        index.close()
    return finish_run(path, report, table)


if __name__ == "__main__":
    main()
