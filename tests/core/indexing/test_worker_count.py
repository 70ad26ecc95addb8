"""The default worker count: the cores available, bounded by memory and ``MINIRAG_MAX_WORKERS``."""

from __future__ import annotations

import pytest

from minirag_core.indexing import worker_count
from minirag_core.indexing.worker_count import default_workers, resolve_workers


@pytest.fixture
def eight_cores(monkeypatch):
    monkeypatch.setattr(worker_count, "available_cores", lambda: 8)
    monkeypatch.setattr(worker_count, "available_memory", lambda: 64 << 30)
    monkeypatch.delenv(worker_count.MAX_WORKERS_ENV, raising=False)


def test_the_default_is_one_worker_per_core(eight_cores) -> None:
    assert default_workers() == 8 and resolve_workers(None) == 8


def test_memory_bounds_the_default(eight_cores, monkeypatch) -> None:
    monkeypatch.setattr(worker_count, "available_memory", lambda: 3 * worker_count.WORKER_MEMORY_BYTES + 1)
    assert default_workers() == 3
    monkeypatch.setattr(worker_count, "available_memory", lambda: 1)
    assert default_workers() == 1


def test_the_setting_bounds_the_default_but_not_an_explicit_count(eight_cores, monkeypatch) -> None:
    monkeypatch.setenv(worker_count.MAX_WORKERS_ENV, "2")
    assert default_workers() == 2 and resolve_workers(5) == 5
    monkeypatch.setenv(worker_count.MAX_WORKERS_ENV, "16")
    assert default_workers() == 8


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_setting_is_named(eight_cores, monkeypatch, value) -> None:
    monkeypatch.setenv(worker_count.MAX_WORKERS_ENV, value)
    with pytest.raises(ValueError, match=worker_count.MAX_WORKERS_ENV):
        default_workers()


@pytest.mark.parametrize("workers", [0, -2, True, 2.0, "2"])
def test_a_bad_count_is_refused(workers) -> None:
    with pytest.raises(ValueError, match="workers="):
        resolve_workers(workers)


def test_the_cores_are_those_this_process_may_run_on() -> None:
    import os

    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert worker_count.available_cores() == expected
