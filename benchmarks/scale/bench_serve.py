"""Queries through ``minirag serve`` against the same questions as one-shot ``minirag query``
processes: starts the server on loopback, waits until it answers, sends each question over HTTP
(httpx) and prints p50 / p95 of the timed requests (the first, which warms the index, is not
counted) beside the median wall time of one-shot processes.

    .venv/bin/python benchmarks/scale/bench_serve.py WORKDIR [--queries 20] [--one-shot 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.servers import free_port  # noqa: E402

QUESTIONS = ["What did Wolfgang suggest for lunch at the cozy café downtown?",
             "Where did Li Hua and Wolfgang have lunch?", "Who fixed the light fixture?",
             "What did Adam say about the rent?", "When is the next football game?"]
CLI = [sys.executable, "-m", "minirag_core.interfaces.cli"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workdir")
    p.add_argument("--queries", type=int, default=20, help="timed queries through the server (default 20)")
    p.add_argument("--one-shot", type=int, default=3, help="one-shot `minirag query` processes to time (default 3)")
    args = p.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    one_shot = []
    for i in range(args.one_shot):
        start = time.perf_counter()
        subprocess.run([*CLI, "query", QUESTIONS[i % len(QUESTIONS)], "--workdir", args.workdir], env=env,
                       check=True, capture_output=True)
        one_shot.append(time.perf_counter() - start)
    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen([*CLI, "serve", "--workdir", args.workdir, "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            while True:
                try:
                    client.get("/openapi.json")
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            ready = time.perf_counter() - started
            client.post("/query", json={"question": QUESTIONS[0]}).raise_for_status()  # warm: first query
            timed = []
            for i in range(args.queries):
                start = time.perf_counter()
                client.post("/query", json={"question": QUESTIONS[i % len(QUESTIONS)]}).raise_for_status()
                timed.append((time.perf_counter() - start) * 1000)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(json.dumps({"workdir": args.workdir, "one_shot_query_s_median": round(statistics.median(one_shot), 2),
                      "serve_ready_s": round(ready, 2), "serve_queries": len(timed),
                      "serve_p50_ms": round(percentile(timed, 0.5), 1),
                      "serve_p95_ms": round(percentile(timed, 0.95), 1)}, indent=2))


if __name__ == "__main__":
    main()
