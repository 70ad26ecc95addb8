"""Where an index's memory goes: RSS added by each part of a built workdir, loaded one at a time.

    .venv/bin/python benchmarks/scale/bench_memory.py --workdir DIR [--copy] [--save]

Parts, in order: the graph store (snapshot + log), the extraction cache, the embedding model,
Chroma (each collection opened with one query), and, with ``--save``, the transient peak of
rewriting the graph snapshot (into a scratch copy; the workdir is never written). Linux only
(reads ``/proc/self/status``; resets the peak through ``/proc/self/clear_refs``). ``--copy``
opens Chroma on a scratch copy, for a workdir that must stay untouched byte for byte.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _status() -> tuple[float, float]:
    """(current RSS, peak RSS since the last reset) in MB."""
    found = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, value = line.split(":", 1)
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


class Steps:
    """Records RSS after each step, the RSS it added and its transient peak."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._last = self._reset()

    @staticmethod
    def _reset() -> float:
        gc.collect()
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # peak := current
        return _status()[0]

    def __call__(self, label: str, started: float) -> None:
        gc.collect()
        rss, peak = _status()
        row = {"step": label, "rss_mb": rss, "added_mb": rss - self._last, "transient_peak_mb": peak - rss,
               "seconds": time.perf_counter() - started}
        self.rows.append(row)
        print(f"{label:40s} RSS {rss:7.0f} MB  added {row['added_mb']:+7.0f}  peak above RSS "
              f"{row['transient_peak_mb']:6.0f}  {row['seconds']:6.1f}s", flush=True)
        self._last = self._reset()


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--copy", action="store_true", help="open Chroma on a scratch copy")
    p.add_argument("--save", action="store_true", help="also time and measure rewriting the snapshot")
    p.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    args = p.parse_args(argv)
    from minirag_core.llm.cache import LLMCallCache
    from minirag_core.storage.graph_snapshot import write_snapshot
    from minirag_core.storage.networkx_store import NetworkXGraphStore

    steps = Steps()
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as scratch:
        t = time.perf_counter()
        store = NetworkXGraphStore(args.workdir / "graph.json")
        steps(f"graph store ({store.stats()['relations']} relations)", t)
        if args.save:
            t = time.perf_counter()
            write_snapshot(Path(scratch) / "graph.json", store.graph, 0)
            steps("snapshot rewrite", t)
        t = time.perf_counter()
        cache = LLMCallCache(args.workdir / "extractions.jsonl")
        steps(f"extraction cache ({len(cache)} entries)", t)
        from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

        t = time.perf_counter()
        embedder = SentenceTransformerEmbedder()
        query = embedder.embed(["warm-up"])[0]
        steps("embedding model", t)
        from minirag_core.storage.chroma_store import ChromaVectorStore

        chroma = args.workdir / "chroma"
        if args.copy:
            chroma = Path(shutil.copytree(chroma, Path(scratch) / "chroma"))
        t = time.perf_counter()
        vectors = ChromaVectorStore(chroma)
        steps("chroma client", t)
        for name in ("entities", "chunks", "chunk_windows", "relations"):
            t = time.perf_counter()
            count = vectors.count(name)
            vectors.query(name, np.asarray(query), 5)
            steps(f"chroma {name} ({count})", t)
    if args.out is not None:
        args.out.write_text(json.dumps(steps.rows, indent=1))
    return steps.rows


if __name__ == "__main__":
    main()
