"""The servers the tests start (``benchmarks/servers.py``, shared with the benchmarks)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.servers import ChromaServer, ServerProcess, chroma_executable, free_port  # noqa: E402

__all__ = ["ChromaServer", "ServerProcess", "chroma_executable", "free_port"]
