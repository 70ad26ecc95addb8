"""The loop the scripts here share: every tune half, every setting of a grid, one printed row of
mini's recall@5 / all-evidence@5 (overall and per question type), on ``run_suite.py``'s indexes."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.run_suite import question_group, score  # noqa: E402

SETS = ("musique_50", "hotpotqa_100", "lihuaworld")


def print_tune_rows(grid: dict[str, list], rank: Callable[[Any, Any, dict, Any], list],
                    prepare: Callable[[Any, list], Any] | None = None) -> None:
    """``rank(index, question, setting, prepared)`` gives the ranked chunks (``.doc_id``, ``.text``);
    ``prepare(index, questions)`` runs once per set."""
    configure_threads(1)
    for name in SETS:
        dataset = devsets.load(name)
        questions = [q for q in dataset.half("tune") if q.has_evidence]
        index, _ = open_corpus_index(DEFAULT_OUT / f"{name}.workdir", dataset.documents)
        prepared = prepare(index, questions) if prepare else None
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            records, groups = [], {}
            for q in questions:
                chunks = rank(index, q, setting, prepared)
                records.append(score(q, [c.doc_id for c in chunks], [c.text for c in chunks]))
                groups.setdefault(question_group(name, q.type), []).append(records[-1])

            def pct(rows: list[dict], metric: str) -> float:
                return round(100 * sum(r[metric] for r in rows) / len(rows), 1)

            print(name, setting, pct(records, "recall@5"), pct(records, "all_evidence@5"),
                  {g: (pct(v, "recall@5"), pct(v, "all_evidence@5")) for g, v in groups.items()}, flush=True)
