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
           "started"]


@contextmanager
def started(server_class: type[ServerProcess], root: Path) -> Iterator[ServerProcess]:
    """A server of ``server_class`` on a free loopback port, its data and log under ``root``."""
    server = server_class(root / "data", free_port(), root / "server.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()
