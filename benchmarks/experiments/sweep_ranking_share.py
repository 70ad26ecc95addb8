"""How much the entity descriptions may add to a chunk's ranking text (``RANKING_EXTRA_SHARE``).

    PYTHONPATH=shared:. .venv/bin/python benchmarks/experiments/sweep_ranking_share.py \
        --out DIR --sets lihuaworld --split tune --shares inf,0.5,0.35

For each share, every chunk vector of each set's index in ``DIR`` (``run_suite.py --out DIR`` builds
them) is brought in line with the ranking text that share gives (only chunks whose text changes are
embedded again), and mini and naive are scored on the chosen half with ``top_k=10`` and no token
budget. The indexes are changed in place: run it on a copy. Chosen on the tune halves: 0.5.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.run_suite import score  # noqa: E402


def resync_chunks(index) -> int:
    """Embed again the chunks whose ranking text changed; how many chunks were checked."""
    from minirag_core.search.graph_vectors import sync_vectors

    ids = index.graph_store.chunk_ids()
    graph = index.graph_store.working_graph(ids)
    with index._writing():
        sync_vectors(graph, index.vectors, [], [], ids, index_relations=False)
        index._after_write()
    return len(ids)


def recall(index, questions, mode: str) -> tuple[float, float]:
    records = []
    for q in questions:
        result = index.query(q.question, mode=mode, top_k=10, token_budget=10**9)
        records.append(score(q, [c.doc_id for c in result.chunks], [c.text for c in result.chunks]))
    return tuple(round(100 * sum(r[k] for r in records) / len(records), 1) for k in ("recall@5", "all_evidence@5"))


def main() -> None:
    from minirag_core.search import vectors

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="folder with the sets' indexes (a copy)")
    p.add_argument("--sets", default="lihuaworld")
    p.add_argument("--split", choices=("tune", "test"), default="tune")
    p.add_argument("--shares", default="inf,0.5,0.35", help="comma-separated; inf: no bound")
    args = p.parse_args()
    configure_threads(1)
    for name in args.sets.split(","):
        data = devsets.load(name)
        questions = [q for q in data.half(args.split) if q.has_evidence]
        index, _ = open_corpus_index(args.out / f"{name}.workdir", data.documents)
        for share in (float(s) for s in args.shares.split(",")):
            vectors.RANKING_EXTRA_SHARE = share
            start = time.perf_counter()
            checked = resync_chunks(index)
            seconds = time.perf_counter() - start
            mini, naive = recall(index, questions, "mini"), recall(index, questions, "naive")
            print(f"{name} {args.split} share {share}: mini r@5 / all@5 {mini[0]} / {mini[1]}, naive {naive[0]} / "
                  f"{naive[1]} ({checked} chunks checked in {seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
