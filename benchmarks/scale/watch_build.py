"""Sample a running build once a minute: its RSS and peak RSS, and the chunks in its workdir.

    .venv/bin/python benchmarks/scale/watch_build.py --pid PID --workdir DIR --out FILE.csv [--every 60]

For builds that outlast a session (``bench_scale.py --sizes 100000 --graph-backend sqlite``):
the curve of chunks against time (throughput as the index grows) and of RSS against chunks, read
from outside the process (``/proc/PID/status``, and the workdir's ``graph.sqlite`` opened
read-only). ``--plot PNG`` draws a CSV instead of watching.
"""

from __future__ import annotations

import argparse
import csv
import sqlite3
import time
from pathlib import Path


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB."""
    found = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
    return found["VmRSS"], found["VmHWM"]


def chunks_in(workdir: Path) -> int | None:
    db = workdir / "graph.sqlite"
    if not db.exists():
        return None
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM nodes WHERE kind = 'chunk'").fetchone()[0])


def watch(pid: int, workdir: Path, out: Path, every: float) -> None:
    new = not out.exists()
    with out.open("a", newline="") as handle:
        writer = csv.writer(handle)
        if new:
            writer.writerow(["time", "rss_mb", "hwm_mb", "chunks"])
        while Path(f"/proc/{pid}").exists():
            rss, hwm = rss_mb(pid)
            writer.writerow([int(time.time()), round(rss), round(hwm), chunks_in(workdir)])
            handle.flush()
            time.sleep(every)


def plot(csv_path: Path, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in csv.DictReader(csv_path.open()) if r["chunks"] not in ("", "None")]
    t0 = int(rows[0]["time"])
    minutes = [(int(r["time"]) - t0) / 60 for r in rows]
    chunks = [int(r["chunks"]) for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(minutes, chunks, "-")
    left.set(xlabel="minutes", ylabel="chunks indexed", title="Build progress")
    right.plot(chunks, [float(r["rss_mb"]) for r in rows], "-", label="RSS")
    right.plot(chunks, [float(r["hwm_mb"]) for r in rows], ":", label="peak RSS of the process")
    right.set(xlabel="chunks indexed", ylabel="MB", title="Memory as the index grows")
    right.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pid", type=int)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--every", type=float, default=60.0)
    p.add_argument("--plot", type=Path, default=None, help="draw --out as this PNG instead of watching")
    args = p.parse_args(argv)
    if args.plot:
        plot(args.out, args.plot)
    else:
        watch(args.pid, args.workdir, args.out, args.every)


if __name__ == "__main__":
    main()
