"""The servers the tests start (``benchmarks/servers.py``, shared with the benchmarks)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.servers import (ChromaServer, FalkorDBServer, ServerProcess, chroma_executable,  # noqa: E402
                                falkordb_binaries, free_port)

__all__ = ["ChromaServer", "FalkorDBServer", "ServerProcess", "chroma_executable", "falkordb_binaries", "free_port",
           "started", "started_or_skipped"]


@contextmanager
def started(server_class: type[ServerProcess], root: Path) -> Iterator[ServerProcess]:
    """A server of ``server_class`` on a free loopback port, its data and log under ``root``."""
    server = server_class(root / "data", free_port(), root / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def started_or_skipped(server_class: type[ServerProcess], root: Path) -> Iterator[ServerProcess]:
    """``started``, or the test skipped where the server's binaries are not installed."""
    import pytest

    if (chroma_executable() if server_class is ChromaServer else falkordb_binaries()) is None:
        pytest.skip(f"{server_class.__name__}: its binaries are not installed (the chroma / falkordb extras)")
    with started(server_class, root) as server:
        yield server
