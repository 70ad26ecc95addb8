"""Handing freed heap memory back to the operating system between write batches.

Embedding batches of varying shapes interleave large temporary buffers with the long-lived
objects of the graph and caches, so glibc's heap fragments: pages freed in its middle stay
counted in the process's resident memory. On a 100,000-passage build, 1.6 of a 2.2 GB heap
were such freed pages after 10,000 passages; ``malloc_trim(0)`` returned them. Elsewhere
(macOS, musl, Windows) this is a no-op.
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


def release_freed_memory() -> bool:
    """Return the heap's free pages to the system (glibc ``malloc_trim``); True if it could."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
