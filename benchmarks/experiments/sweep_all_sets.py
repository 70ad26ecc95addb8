"""Choose a retrieval setting on the tune halves of *every* development set at once.

Each candidate setting (``--grid`` names a grid below, or ``--setting '{"bridge_weight": 1.0}'``
gives one) runs mini mode on every set's tune half; BM25, dense (naive) and their hybrid run
once on the same chunks. A row per setting and set gives recall@5 overall and per question
type (two-page, keyword, ...), and the rule the project chooses by: a setting is acceptable only
if, on every set, it loses no more than a point against the best setting's figure... reported as
``worst_loss`` (the largest drop of recall@5 against the reference row, the first setting).

    .venv/bin/python benchmarks/experiments/sweep_all_sets.py --out /work/out/base --grid graph
    .venv/bin/python benchmarks/experiments/sweep_all_sets.py --setting '{"bridge_weight": 0.5}'

``--modes mini,naive`` runs each setting in each mode (a setting every mode reads, such as
``max_chunks_per_document``, moves the naive baseline too). Besides evidence recall, ``answer_words@5``
is the share of the gold answer's words (of 4+ letters) found in the top 5 chunks' texts: what
the chunks carry, which a document-level recall cannot see (two sections of one page count once).

Indexes are reused from ``run_suite.py --out DIR`` workdirs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.metrics import normalise_answer  # noqa: E402
from benchmarks.quality.run_suite import SetRunner, question_group, score  # noqa: E402

GRIDS: dict[str, dict[str, list]] = {
    "none": {},
    "graph": {"graph_weight": [0.1, 0.25, 0.5], "bridge_weight": [0.25, 0.5, 1.0, 1.5]},
    "bridge": {"bridge_weight": [0.0, 0.25, 0.5, 0.75, 1.0, 1.5]},
    "coverage": {"coverage_weight": [0.0, 0.2, 0.4]},
    "mix": {"dense_weight": [1.0, 2.0, 3.0], "lexical_weight": [0.5, 1.0, 1.5]},
}
BASELINES = ("bm25", "naive", "hybrid")


def mean(values: list[float]) -> float:
    return round(100.0 * sum(values) / len(values), 1) if values else float("nan")


def answer_words(answer: str, texts: list[str]) -> float | None:
    """Share of the answer's words of 4+ letters that occur in ``texts`` (None: no such word)."""
    wanted = {w for w in normalise_answer(answer).split() if len(w) >= 4}
    if not wanted:
        return None
    present = set(normalise_answer(" ".join(texts)).split())
    return len(wanted & present) / len(wanted)


def summarise(records: list[dict]) -> dict:
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(record["group"], []).append(record)
    words = [r["answer_words@5"] for r in records if r.get("answer_words@5") is not None]
    return {"recall@5": mean([r["recall@5"] for r in records]), "recall@2": mean([r["recall@2"] for r in records]),
            "answer_words@5": mean(words),
            **{f"{g}": mean([r["recall@5"] for r in rs]) for g, rs in sorted(groups.items()) if len(groups) > 1}}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its workdirs are reused)")
    p.add_argument("--sets", default=None, help="comma-separated development sets (default: every set found)")
    p.add_argument("--split", default="tune", choices=("tune", "test"))
    p.add_argument("--grid", choices=sorted(GRIDS), default="none")
    p.add_argument("--setting", action="append", default=[], help="a JSON object of settings (repeatable)")
    p.add_argument("--baselines", action="store_true", help="also run BM25, naive and hybrid")
    p.add_argument("--modes", default="mini", help="comma-separated modes each setting runs in (mini, naive)")
    p.add_argument("--json", type=Path, default=None, help="write every row here")
    args = p.parse_args(argv)
    grid = GRIDS[args.grid]
    settings = [dict(zip(grid, values)) for values in itertools.product(*grid.values())] if grid else []
    settings += [json.loads(s) for s in args.setting]
    settings = settings or [{}]
    configure_threads(1)
    rows = []
    for name in (args.sets.split(",") if args.sets else devsets.available()):
        data = devsets.load(name)
        questions = [q for q in data.half(args.split) if q.has_evidence]
        index, _ = open_corpus_index(args.out / f"{name}.workdir", data.documents)
        runner = SetRunner(index)
        systems: list[tuple[str, dict]] = [(b, {}) for b in BASELINES] if args.baselines else []
        systems += [(mode, s) for mode in args.modes.split(",") for s in settings]
        for system, setting in systems:
            records = []
            for q in questions:
                if system in ("mini", "naive") and (setting or system == "mini"):
                    result = index.query(q.question, mode=system, top_k=10, token_budget=10**9, **setting)
                    doc_ids, texts = [c.doc_id for c in result.chunks], [c.text for c in result.chunks]
                else:
                    doc_ids, texts, _ = runner.run(system, q.question)
                record = score(q, doc_ids, texts)
                record["answer_words@5"] = answer_words(q.answer, texts[:5]) if q.answer else None
                record["group"] = question_group(name, q.type)
                records.append(record)
            rows.append({"set": name, "system": system, "setting": setting, **summarise(records),
                         "per_question": {q.id: r["recall@5"] for q, r in zip(questions, records)}})
            shown = {k: v for k, v in rows[-1].items() if k != "per_question"}
            print(json.dumps(shown), flush=True)
        index.close() if hasattr(index, "close") else None
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
