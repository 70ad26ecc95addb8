"""CPU time of mini's bridge step (``bridges_over``) with and without ``bridge_local_pool``: the
calls of the first 20 test questions of a set are recorded, then replayed at each pool size.

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/experiments/bridge_pool_cost.py hotpotqa_100 --out DIR
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from minirag_core.retrieval.modes import mini  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its workdirs are reused)")
    p.add_argument("--pools", default="0,30,0,30", help="pool sizes replayed, in order")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    configure_threads(1)
    calls, bridges_over = [], mini.bridges_over

    def recording(*a, **k):
        calls.append((a, k))
        return bridges_over(*a, **k)

    mini.bridges_over = recording
    data = devsets.load(args.name)
    index, _ = open_corpus_index(args.out / f"{args.name}.workdir", data.documents)
    for q in data.half("test")[:20]:
        index.query(q.question, mode="mini")
    for pool in [int(x) for x in args.pools.split(",")]:
        start = time.thread_time()
        for a, k in calls * args.repeats:
            bridges_over(*a, **{**k, "local_pool": pool})
        print(f"pool {pool}: {(time.thread_time() - start) / (args.repeats * len(calls)) * 1000:.3f} ms CPU a call")


if __name__ == "__main__":
    main()
