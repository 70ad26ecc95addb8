"""Query latency of mini with and without a setting, in one process on one index, interleaved per
question (each system with its own embedder cache, as bench_scale.py does), against naive.

    PYTHONPATH=shared:. .venv/bin/python benchmarks/results/scale/coverage-links/settings_ab.py \
        /tmp/s10k/work-10000 '{"coverage_weight": 0.0}' '{"coverage_weight": 0.4}'
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from benchmarks.scale.bench_scale import _questions
from benchmarks.common import SystemCaches
from minirag_core.indexing.index import MiniRAGIndex


def main() -> None:
    workdir, *settings = sys.argv[1:]
    _, questions = _questions(1000, 30)
    index = MiniRAGIndex(workdir)
    for mode in ("mini", "naive"):  # warm-up, not timed
        index.query(questions[0].question, mode=mode, top_k=5)
    systems = {f"mini {s}": {"mode": "mini", **json.loads(s)} for s in settings} | {"naive": {"mode": "naive"}}
    caches = SystemCaches(index)
    caches.snapshot()
    names = list(systems)
    wall: dict[str, list[float]] = {s: [] for s in names}
    cpu: dict[str, list[float]] = {s: [] for s in names}
    for i, q in enumerate(questions):
        for name in names[i % len(names):] + names[:i % len(names)]:
            caches.use(name)
            t, c = time.perf_counter(), time.process_time()
            index.query(q.question, top_k=5, **systems[name])
            wall[name].append((time.perf_counter() - t) * 1000)
            cpu[name].append((time.process_time() - c) * 1000)
    naive = statistics.median(wall["naive"])
    print(json.dumps({name: {"p50_ms": round(statistics.median(wall[name]), 1),
                             "cpu_p50_ms": round(statistics.median(cpu[name]), 1),
                             "x_naive": round(statistics.median(wall[name]) / naive, 2)} for name in names}))


if __name__ == "__main__":
    main()
