"""One writer per workdir across processes (``filelock``); readers never wait for it."""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

LOCK_NAME = ".write.lock"


class WorkdirBusy(RuntimeError):
    """Another process is writing to the workdir and did not finish within the timeout."""


class WorkdirLock:
    """Re-entrant inter-process write lock on a workdir; ``timeout=None`` waits as long as it takes."""

    def __init__(self, workdir: Path, timeout: float | None = None) -> None:
        self.path = workdir / LOCK_NAME
        self.timeout = timeout
        self._lock = FileLock(str(self.path))

    def __enter__(self) -> "WorkdirLock":
        try:
            self._lock.acquire(timeout=-1 if self.timeout is None else self.timeout)
        except Timeout:
            raise WorkdirBusy(f"another process is writing to {self.path.parent} (lock {self.path}); "
                              f"waited {self.timeout:g} s. Try again when it has finished.") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def try_acquire(self) -> bool:
        """Take the lock only if it is free now (for optional work such as repair on open); not
        taken on a workdir this process cannot write (read-only: a reader's, with nothing to do)."""
        try:
            self._lock.acquire(timeout=0)
            return True
        except (Timeout, OSError):
            return False

    def release(self) -> None:
        self._lock.release()
