"""Mini mode's CPU after the encoder, per question: ``_retrieve`` with the question's mapping and
vectors already made (the encoder's cache warm), the graph half run in line, timed in thread
CPU time (the least of ``--repeats`` runs per question, so other processes weigh little).
Naive mode's is printed beside it. Run at two commits to compare::

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/quality/mini_cpu.py --out out hotpotqa_100 pydantic_docs
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


@contextlib.contextmanager
def in_line(job: Any, allowed: bool = True) -> Iterator[None]:
    """``concurrency.beside`` without the worker thread: the caller runs the job itself."""
    yield None


def cpu_ms(name: str, workdir: Path, repeats: int) -> dict[str, float]:
    from benchmarks.common import open_corpus_index
    from benchmarks.quality import devsets
    import minirag_core.retrieval.modes.mini as mini

    mini.beside = in_line
    data = devsets.load(name)
    questions = [q.question for q in data.questions if q.split == "test" and q.has_evidence]
    index, _ = open_corpus_index(workdir, data.documents, rebuild=False)
    mappings = [index.map_query(q) for q in questions]
    out = {}
    for mode in ("mini", "naive"):
        best = [float("inf")] * len(questions)
        for _ in range(repeats + 1):  # the first pass warms the caches
            for i, (question, mapping) in enumerate(zip(questions, mappings)):
                start = time.thread_time()
                index._retrieve(question, mode, mapping if mode == "mini" else None, index.settings, None)
                best[i] = min(best[i], (time.thread_time() - start) * 1000)
        out[f"{mode}_p50_ms"] = round(statistics.median(best), 2)
    return out


def parse_sets(description: str, argv: list[str] | None, repeats: int) -> argparse.Namespace:
    """The options of a per-set CPU benchmark: set names, ``--out`` (their indexes), ``--repeats``."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--out", type=Path, required=True, help="where run_suite.py built the sets' indexes")
    parser.add_argument("--repeats", type=int, default=repeats)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_sets(__doc__ or "", argv, repeats=5)
    results = {name: cpu_ms(name, args.out / f"{name}.workdir", args.repeats) for name in args.sets}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
