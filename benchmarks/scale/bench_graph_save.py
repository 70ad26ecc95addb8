"""Cost of persisting one insert batch: the whole graph rewritten (``save()``, what every
batch cost before the change log) against the batch's changes appended (``save(change)``).

    .venv/bin/python benchmarks/scale/bench_graph_save.py WORKDIR [--batch 64] [--repeat 5] [--replicate 10]

Reads an index's graph (``--replicate N``: N disjoint copies of it, ids suffixed, to stand
for a corpus N times larger), takes ``--batch`` chunks as "the batch just inserted" (the
chunks, their entities and their relations) and times both writes into a scratch directory.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import networkx as nx  # noqa: E402

from minirag_core.graph.heterogeneous import CHUNK  # noqa: E402
from minirag_core.storage.graph_log import Change  # noqa: E402
from minirag_core.storage.networkx_store import NetworkXGraphStore  # noqa: E402


def _replicate(store: NetworkXGraphStore, copies: int) -> None:
    base = store.graph
    graph = nx.Graph()
    graph.graph["documents"] = {}
    for r in range(copies):
        suffix = f"~r{r}" if r else ""
        graph.update(nx.relabel_nodes(base, {n: n + suffix for n in base}, copy=True))
        graph.graph["documents"].update({d + suffix: e for d, e in base.graph.get("documents", {}).items()})
    store.graph = graph


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workdir", type=Path)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--replicate", type=int, default=1)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "graph.json"
        shutil.copy(args.workdir / "graph.json", path)
        log = args.workdir / "graph.log.jsonl"
        if log.exists():
            shutil.copy(log, path.with_name(log.name))
        store = NetworkXGraphStore(path)
        if args.replicate > 1:
            _replicate(store, args.replicate)
        g = store.graph
        chunks = sorted(n for n, kind in g.nodes(data="kind") if kind == CHUNK)[-args.batch:]
        entities = sorted({e for c in chunks for e in g.neighbors(c)})
        edges = {tuple(e) for c in chunks for e in g.nodes[c].get("relations", ())}
        change = Change(chunks + entities, edges, {"documents": sorted({g.nodes[c]["doc_id"] for c in chunks})})
        full, logged = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            store.save()
            full.append(time.perf_counter() - t)
            t = time.perf_counter()
            store.save(change)
            logged.append(time.perf_counter() - t)
        result = {"graph_nodes": g.number_of_nodes(), "graph_edges": g.number_of_edges(),
                  "snapshot_bytes": path.stat().st_size, "batch_chunks": len(chunks),
                  "full_rewrite_ms": statistics.median(full) * 1000,
                  "logged_change_ms": statistics.median(logged) * 1000,
                  "log_bytes_per_batch": path.with_name("graph.log.jsonl").stat().st_size}  # one record
        result["ratio"] = result["full_rewrite_ms"] / result["logged_change_ms"]
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
