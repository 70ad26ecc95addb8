"""The servers the tests start (``benchmarks/servers.py``, shared with the benchmarks)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.servers import (ChromaServer, FalkorDBServer, ServerProcess, chroma_executable,  # noqa: E402
                                falkordb_binaries, free_port)

__all__ = ["ChromaServer", "FalkorDBServer", "ServerProcess", "chroma_executable", "falkordb_binaries", "free_port"]
