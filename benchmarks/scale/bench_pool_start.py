"""Where a worker pool pays for its start-up: the first N passages of HotpotQA-100 inserted with
one worker and through a new two-worker pool, interleaved (1, 2, 2, 1), per N. The size where
the two times cross is ``MIN_POOL_CHARS`` (``indexing/worker_count.py``).

    PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_pool_start.py --data-root ../shared/data 60 180
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.scale.bench_ingest import load_shape, new_embedder, warm_up  # noqa: E402


def build(docs: list[Any], workers: int) -> float:
    """Seconds to open an index, insert ``docs`` and close it (its workers stop)."""
    from minirag_core.indexing.index import MiniRAGIndex

    with tempfile.TemporaryDirectory(prefix="minirag-bench-pool-") as tmp:
        start = time.perf_counter()
        with MiniRAGIndex(Path(tmp) / "index", embedder=new_embedder(), workers=workers) as index:
            index.insert(docs)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sizes", nargs="+", type=int, help="numbers of passages to insert")
    p.add_argument("--data-root", type=Path, default=None, help="folder of the data sets (default: devsets')")
    args = p.parse_args(argv)
    from benchmarks.quality import devsets
    from minirag_core.indexing import worker_count

    worker_count.MIN_POOL_CHARS = 0  # every insert through the pool with workers=2
    warm_up()
    docs = load_shape("passages", args.data_root or devsets.DATA_ROOT)
    for n in args.sizes:
        part = docs[:n]
        chars = sum(len(d.text) for d in part)
        one, two = [build(part, 1)], [build(part, 2)]
        two.append(build(part, 2)), one.append(build(part, 1))
        print(f"{n} passages, {chars} chars: workers=1 {statistics.mean(one):.1f} s ({one[0]:.1f}, {one[1]:.1f}); "
              f"a new two-worker pool {statistics.mean(two):.1f} s ({two[0]:.1f}, {two[1]:.1f})", flush=True)


if __name__ == "__main__":
    main()
