"""Which ``nlp.pipe`` settings make the offline extractor's spaCy pass faster: batch size,
worker processes and components, timed in one run on the prose lines the extractor feeds
spaCy (ratios against the current setting, best of ``--repeat``).

Run: PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_spacy_pipe.py ../shared/data/hotpotqa_100/corpus.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from minirag_core.extraction.formats import CHAT, chunk_format, prose_lines
from minirag_core.extraction.nlp import BATCH_SIZE, load_model


def _lines(path: Path, limit: int | None) -> list[str]:
    docs = json.loads(path.read_text(encoding="utf-8"))[:limit]
    lines: list[str] = []
    for doc in docs:
        fmt = chunk_format(doc["text"], {})
        if fmt != CHAT:
            lines += prose_lines(doc["text"], fmt)
    return lines


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("corpus", type=Path)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    lines = _lines(args.corpus, args.limit)
    nlp = load_model()
    configs = {
        f"current (batch {BATCH_SIZE})": {"batch_size": BATCH_SIZE},
        "batch 16": {"batch_size": 16},
        "batch 256": {"batch_size": 256},
        "batch 1000": {"batch_size": 1000},
        "2 processes": {"batch_size": BATCH_SIZE, "n_process": 2},
        "no tagger/attribute_ruler (loses pos_)": {"batch_size": BATCH_SIZE,
                                                   "disable": ["tagger", "attribute_ruler"]},
    }
    list(nlp.pipe(lines[:50]))  # warm up
    print(f"{len(lines)} prose lines, {sum(len(x) for x in lines)} chars, pipeline {nlp.pipe_names}", flush=True)
    base = None
    for name, kwargs in configs.items():
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for _doc in nlp.pipe(lines, **kwargs):
                pass
            best = min(best, time.perf_counter() - t0)
        base = base or best
        print(f"{name:42s} {best:7.2f} s  {len(lines) / best:7.1f} lines/s  x{base / best:.2f} vs current", flush=True)


if __name__ == "__main__":
    main()
