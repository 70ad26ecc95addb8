"""A readers-writer lock (many queries at once, a writer alone), and a query's two
independent halves run side by side on a spare core."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from minirag_core.scores import one_blas_thread

T = TypeVar("T")


def spare_core() -> bool:
    """Whether this process may run on more than one core."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) > 1
    return (os.cpu_count() or 1) > 1


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """One process-wide pool for ``beside``: a thread started per query costs more than the job."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="minirag-beside")
        return _POOL


@contextmanager
def beside(job: Callable[[], T], allowed: bool = True) -> Iterator[Future[T] | None]:
    """Run ``job`` in a worker thread while the block runs, when ``allowed`` (its callees are
    safe to call from two threads) and a second core exists; yields its future, else ``None``
    (the caller then does the work itself). BLAS runs on one thread meanwhile, so the two
    threads' products do not fight over the cores; leaving the block waits for the job."""
    if not (allowed and spare_core()):
        yield None
        return
    with one_blas_thread():
        future = _pool().submit(job)
        try:
            yield future
        except BaseException:
            wait([future])  # the block failed: the job still finishes before its callees' state goes
            raise
        future.result()


class ReadWriteLock:
    """Queries hold the read side for their whole run; an index write holds the write side
    while it changes the graph and the vectors, so no query sees a half-applied write."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting_writers = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._waiting_writers:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting_writers += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting_writers -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()
