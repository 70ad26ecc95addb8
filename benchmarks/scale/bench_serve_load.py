"""Load on ``minirag serve``: N concurrent clients x M mixed operations (queries in every mode,
inserts, re-inserts, deletes) against a real server on a fresh workdir, then checks that every
acknowledged write holds (last write wins per id), every acknowledged delete is gone and graph and
vectors agree; then SIGKILLs the server in the middle of a large insert, restarts it on the same
workdir and checks again. Prints and writes operations, p50/p99 per kind, 5xx count and the checks.

    .venv/bin/python benchmarks/scale/bench_serve_load.py [--clients 8] [--ops 1000]
        [--out benchmarks/results/scale/serve_load.json]
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.scale.bench_serve import percentile  # noqa: E402
from benchmarks.scale.serve_load_clients import ClientLog, document_text, run_client  # noqa: E402
from benchmarks.servers import ServerProcess, free_port  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "results" / "scale" / "serve_load.json"
SEED = 20261128
SEED_DOCS = 4
LARGE_SENTENCES = 250          # the document whose insert is killed (several chunks)
REQUEST_TIMEOUT = 600.0


class MiniragServer(ServerProcess):
    """``minirag serve`` on 127.0.0.1 with an API token; ready once it answers (401 counts: the
    token guards every path, the schema included)."""

    name = "minirag serve"

    def __init__(self, workdir: Path, token: str, log: Path) -> None:
        super().__init__(workdir, free_port(), log)
        self.token, self.url = token, f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "minirag_core.interfaces.cli", "serve", "--workdir", str(self.path),
                "--port", str(self.port), "--token", self.token]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/openapi.json", timeout=2) as reply:
                return reply.status == 200
        except urllib.error.HTTPError as exc:
            return exc.code == 401
        except OSError:
            return False

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.proc = None


@contextmanager
def repairs_recorded() -> Iterator[list[dict[str, int]]]:
    """What ``MiniRAGIndex.repair`` fixed while the block opened an index (it runs on open after an
    unclean stop); a clean stop leaves nothing to fix."""
    from minirag_core.indexing.index import MiniRAGIndex

    fixes: list[dict[str, int]] = []
    original = MiniRAGIndex.repair

    def spy(self: Any) -> dict[str, int]:
        fixed = original(self)
        fixes.append(fixed)
        return fixed

    MiniRAGIndex.repair = spy  # type: ignore[method-assign]
    try:
        yield fixes
    finally:
        MiniRAGIndex.repair = original  # type: ignore[method-assign]


def check_workdir(workdir: Path, expected: dict[str, str | None], embedder: Any = None) -> dict[str, Any]:
    """Open the stopped server's workdir: each id holds its last acknowledged text (by content hash)
    or is gone when its last acknowledged write was a delete, and every collection holds exactly the
    ids the graph implies (``tests/core/indexing/test_crash_safety.py``)."""
    from minirag_core.indexing.documents import content_hash
    from minirag_core.indexing.index import MiniRAGIndex

    with repairs_recorded() as fixes:
        index = MiniRAGIndex(workdir, embedder=embedder)
    try:
        registry, problems = index.registry, []
        for doc_id, text in sorted(expected.items()):
            record = registry.get(doc_id)
            if text is None and record is not None:
                problems.append(f"{doc_id}: delete acknowledged, still present")
            elif text is not None and record is None:
                problems.append(f"{doc_id}: insert acknowledged, absent")
            elif text is not None and record is not None and record.hash != content_hash(text):
                problems.append(f"{doc_id}: holds another text than the last acknowledged"
                                f"{' (partly indexed)' if not record.complete else ''}")
        for name, ids in index.expected_vector_ids().items():
            held = index.vectors.store.ids(name)
            if held != ids:
                problems.append(f"{name}: vectors and graph disagree ({len(ids - held)} missing, "
                                f"{len(held - ids)} extra)")
        return {"documents": len(registry), "checked_ids": len(expected),
                "repaired_on_open": {k: v for f in fixes for k, v in f.items() if v}, "problems": problems,
                "embedder": index.embedder}
    finally:
        index.close()


def load_phase(server: MiniragServer, clients: int, ops: int,
               seconds: float | None) -> tuple[list[ClientLog], float]:
    headers = {"Authorization": f"Bearer {server.token}"}
    start = time.perf_counter()
    stop_at = time.monotonic() + seconds if seconds else float("inf")
    with ThreadPoolExecutor(clients) as pool:
        logs = list(pool.map(lambda c: run_client(server.url, headers, c, ops, SEED, REQUEST_TIMEOUT, stop_at),
                             range(clients)))
    return logs, time.perf_counter() - start


def summarise(logs: list[ClientLog], seconds: float) -> dict[str, Any]:
    latencies: dict[str, list[float]] = defaultdict(list)
    for log in logs:
        for kind, values in log.latencies_ms.items():
            latencies[kind].extend(values)
    return {"seconds": round(seconds, 1), "operations": sum(len(v) for v in latencies.values()),
            "per_kind": {k: {"ops": len(v), "p50_ms": round(percentile(v, 0.5), 1),
                             "p99_ms": round(percentile(v, 0.99), 1)} for k, v in sorted(latencies.items())},
            "server_errors_5xx": sum(len(log.server_errors) for log in logs),
            "other_errors": sum(len(log.other_errors) for log in logs),
            "error_samples": [e for log in logs for e in log.server_errors + log.other_errors][:10]}


def kill_phase(server: MiniragServer, expected: dict[str, str | None]) -> dict[str, Any]:
    """Time one large insert (after a small one that loads the models), then start another and
    SIGKILL the server a third of that time into it; ``kill_landed_mid_insert`` says whether the
    kill came before the answer."""
    rng = random.Random(SEED)
    headers = {"Authorization": f"Bearer {server.token}"}
    warm_doc = {"id": "warm-up", "text": document_text(rng, 3)}
    timed_doc = {"id": "large-timed", "text": document_text(rng, LARGE_SENTENCES)}
    killed_doc = {"id": "large-killed", "text": document_text(rng, LARGE_SENTENCES)}
    with httpx.Client(base_url=server.url, headers=headers, timeout=REQUEST_TIMEOUT) as http:
        if http.post("/insert", json={"documents": [warm_doc]}).status_code == 200:
            expected[warm_doc["id"]] = warm_doc["text"]
        start = time.perf_counter()
        reply = http.post("/insert", json={"documents": [timed_doc]})
        took = time.perf_counter() - start
        if reply.status_code == 200:
            expected[timed_doc["id"]] = timed_doc["text"]
        outcome: dict[str, Any] = {}

        def send() -> None:
            try:
                outcome["status"] = http.post("/insert", json={"documents": [killed_doc]}).status_code
            except httpx.HTTPError as exc:
                outcome["status"] = type(exc).__name__

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(took / 3)
        server.kill()
        sender.join()
    return {"timed_insert_s": round(took, 2), "timed_insert_status": reply.status_code,
            "killed_after_s": round(took / 3, 2), "killed_insert_answer": outcome.get("status"),
            "kill_landed_mid_insert": not isinstance(outcome.get("status"), int), "killed_doc": killed_doc}


def killed_insert_state(workdir: Path, doc: dict[str, str], embedder: Any) -> str:
    from minirag_core.indexing.documents import content_hash
    from minirag_core.indexing.index import MiniRAGIndex

    index = MiniRAGIndex(workdir, embedder=embedder)
    try:
        record = index.registry.get(doc["id"])
        if record is None:
            return "absent"
        return "complete" if record.hash == content_hash(doc["text"]) else "partial"
    finally:
        index.close()


def repair_warnings(log: Path) -> int:
    """How often the server's log says it repaired vectors on open (``MiniRAGIndex.repair``)."""
    return log.read_text(errors="replace").count("repaired vectors to match the graph")


def run(clients: int, ops: int, workdir: Path, seconds: float | None = None) -> dict[str, Any]:
    token, log = secrets.token_urlsafe(16), workdir.with_suffix(".log")
    seed_rng = random.Random(SEED)
    expected: dict[str, str | None] = {f"seed-{i}": document_text(seed_rng, 4) for i in range(SEED_DOCS)}
    server = MiniragServer(workdir, token, log)
    server.start(timeout=300)
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=600) as http:
            http.post("/insert", json={"documents": [{"id": k, "text": v} for k, v in expected.items()]}
                      ).raise_for_status()
        logs, took = load_phase(server, clients, ops, seconds)
    finally:
        server.stop()
    for client_log in logs:
        expected.update({k: v for k, v in client_log.acknowledged.items() if k not in client_log.uncertain})
    load = summarise(logs, took)
    after_load = check_workdir(workdir, expected)
    embedder = after_load.pop("embedder")
    server.start(timeout=300)
    try:
        kill = kill_phase(server, expected)
    finally:
        server.stop()
    killed_doc = kill.pop("killed_doc")
    logged = repair_warnings(log)
    server.start(timeout=300)  # the restart repairs what the kill left, then serves again
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=600) as http:
            restarted_info = http.get("/info").json()
    finally:
        server.stop()
    after_kill = check_workdir(workdir, expected, embedder)
    after_kill.pop("embedder")
    state = killed_insert_state(workdir, killed_doc, embedder)
    kill.update(killed_insert=state, server_repaired_on_restart=repair_warnings(log) > logged,
                info_after_restart={k: restarted_info.get(k) for k in ("documents", "chunks")})
    checks_pass = (not after_load["problems"] and not after_load["repaired_on_open"] and not after_kill["problems"]
                   and state in ("absent", "complete"))
    return {"clients": clients, "ops_per_client": ops, "max_seconds": seconds, "load": load,
            "check_after_load": after_load, "kill_during_insert": kill, "check_after_kill": after_kill,
            "checks_pass": checks_pass}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--ops", type=int, default=1000, help="operations per client (default 1000)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON result (default {DEFAULT_OUT})")
    p.add_argument("--max-seconds", type=float, help="stop the clients after this long (default: run all --ops)")
    p.add_argument("--workdir", type=Path, help="fresh workdir to use (default: a temporary folder)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="serve-load-") as tmp:
        workdir = args.workdir or Path(tmp) / "workdir"
        if workdir.exists() and any(workdir.iterdir()):
            p.error(f"--workdir {workdir} is not empty; the benchmark needs a fresh one")
        result = run(args.clients, args.ops, workdir, args.max_seconds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
