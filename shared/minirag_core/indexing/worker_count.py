"""How many worker processes an index extracts and embeds in (``MiniRAGIndex(workers=None)``, the
default): one per core this process may run on, no more than memory holds, nor than
``MINIRAG_MAX_WORKERS``; and which inserts are large enough to be worth a pool's start-up."""

from __future__ import annotations

import os

#: caps the default worker count (``1``: every insert in this process); an explicit ``workers=N`` is taken as given
MAX_WORKERS_ENV = "MINIRAG_MAX_WORKERS"
#: memory a worker process needs beside the writer: Python, torch, spaCy and the embedding model
#: (a worker peaked at 0.8 GB resident building 8 Markdown pages, 146 k characters; with room to spare)
WORKER_MEMORY_BYTES = 3 << 29
#: an insert of fewer characters than this stays in this process: starting a pool (spawning
#: processes that import torch and load the models) costs more than the workers save on it.
#: Measured on 2 cores shared with other work (load 7-11), the same build in one process and with
#: two workers, back to back (``bench_ingest.py --workers 1``, ``benchmarks/results/scale/less-per-char/``):
#: over three versions of the pool the one process was faster in 9 of 10 pairs at 125-146 k
#: characters (passages, Markdown), the pool in 2 of 3 at 284 k (chat); the earlier crossing at
#: ~60 k (``bench_pool_start.py``) did not hold. Above it the writer prepares the first batch in a thread
#: of its own and starts the processes only when a second batch finds that thread busy (``workers.py``).
MIN_POOL_CHARS = 200_000


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def available_memory() -> int | None:
    """Bytes of memory new processes may take (Linux's ``MemAvailable``, else the free pages),
    None where the platform does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def _max_workers_setting() -> int | None:
    value = os.environ.get(MAX_WORKERS_ENV, "").strip()
    if not value:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{MAX_WORKERS_ENV}={value!r}: give a whole number of processes, 1 or more")
    return count


def default_workers() -> int:
    """Workers for ``workers=None``: the cores available, bounded by memory and the setting."""
    count = available_cores()
    memory = available_memory()
    if memory is not None:
        count = min(count, max(1, memory // WORKER_MEMORY_BYTES))
    setting = _max_workers_setting()
    return max(1, min(count, setting) if setting is not None else count)


def resolve_workers(workers: int | None) -> int:
    """``workers`` checked (a whole number, 1 or more), or the default for None."""
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r}: give a whole number of processes, 1 or more (None: one per core)")
    return workers
