"""Handing freed heap memory back to the operating system between write batches.

Embedding batches of varying shapes interleave large temporary buffers with the long-lived
objects of the graph and caches, so glibc's heap fragments: pages freed in its middle stay
counted in the process's resident memory. On a 100,000-passage build, 1.6 of a 2.2 GB heap
were such freed pages after 10,000 passages; ``malloc_trim(0)`` returned them. Elsewhere
(macOS, musl, Windows) this is a no-op.

A trim walks the whole heap, so past a few GB it costs more than a small write: a caller may
ask for one only once the resident memory has grown by ``min_growth_bytes`` since the last.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _glibc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_PAGE_BYTES = 4096
_last_trimmed_rss = 0


def resident_bytes() -> int | None:
    """This process's resident memory (Linux ``/proc/self/statm``), None where unreadable."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return None


def release_freed_memory(min_growth_bytes: int = 0) -> bool:
    """Return the heap's free pages to the system (glibc ``malloc_trim``), unless resident
    memory grew by less than ``min_growth_bytes`` since the last trim; True where it can."""
    global _last_trimmed_rss
    libc = _glibc()
    if libc is None:
        return False
    rss = resident_bytes()
    if min_growth_bytes and rss is not None and rss - _last_trimmed_rss < min_growth_bytes:
        return True
    libc.malloc_trim(0)
    _last_trimmed_rss = resident_bytes() or 0
    return True
