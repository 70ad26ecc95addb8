"""How a chunk longer than the embedding model reads should be embedded, measured on indexes
``run_suite.py`` built: evidence recall@5 of mini, naive and hybrid when the chunk dense score
comes from (trunc) the first ``max_tokens`` word pieces only, (mean) the normalised sum of its
windows' vectors, (max) its best window.

    .venv/bin/python benchmarks/quality/run_suite.py --split tune --systems naive --sets lihuaworld --out /tmp/w
    .venv/bin/python benchmarks/experiments/sweep_windows.py --out /tmp/w --sets lihuaworld --split tune

Only the chunk dense scores change between variants (the graph, BM25 and entity vectors are
those of the built index), so every variant is scored on the same index in one process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import SystemCaches, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.run_suite import SetRunner, score  # noqa: E402

VARIANTS = ("trunc", "mean", "max")


def chunk_matrices(index) -> tuple[list[str], dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Chunk ids, and per variant the vectors (for max: window vectors and their chunk rows)."""
    from minirag_core.embedding.windows import combine_windows, embed_windows
    from minirag_core.search.graph_vectors import chunk_vector_text

    g = index.graph_store.graph
    ids = sorted(index.graph_store.chunk_ids())
    texts = [chunk_vector_text(g, c) for c in ids]
    trunc = np.asarray(index.embedder.embed(texts), dtype=np.float32)
    windows, owners = embed_windows(index.embedder, texts)
    return ids, {"trunc": trunc, "mean": combine_windows(windows, owners, len(ids))}, windows, owners


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="the --out folder of a run_suite.py run")
    p.add_argument("--sets", default=",".join(devsets.available()))
    p.add_argument("--split", default="tune", choices=("tune", "test", "all"))
    p.add_argument("--systems", default="mini,naive,hybrid")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    configure_threads(args.threads)
    systems = args.systems.split(",")
    results: dict = {}
    for name in args.sets.split(","):
        data = devsets.load(name)
        questions = [q for q in data.questions if (args.split == "all" or q.split == args.split) and q.has_evidence]
        index, _ = open_corpus_index(args.out / f"{name}.workdir", data.documents)
        t0 = time.perf_counter()
        ids, matrices, windows, owners = chunk_matrices(index)
        seconds = time.perf_counter() - t0
        runner = SetRunner(index)
        results[name] = {"chunks": len(ids), "windows": int(len(owners)), "seconds_embedding": seconds}
        for variant in VARIANTS:
            def dense(vector: np.ndarray, variant: str = variant) -> dict[str, float]:
                if variant == "max":
                    best = np.full(len(ids), -np.inf, dtype=np.float32)
                    np.maximum.at(best, owners, windows @ vector)
                    return dict(zip(ids, best.tolist()))
                return dict(zip(ids, (matrices[variant] @ vector).tolist()))

            index.sources.chunk_dense_scores = dense
            caches = SystemCaches(index)
            caches.snapshot()
            recall = {}
            for system in systems:
                caches.use(system)
                values = [score(q, *runner.run(system, q.question)[:2])["recall@5"] for q in questions]
                recall[system] = 100.0 * float(np.mean(values)) if values else None
            results[name][variant] = recall
            print(name, variant, {s: round(v, 1) for s, v in recall.items() if v is not None}, flush=True)
    print(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
