"""Freed heap pages go back to the system after writes (once memory has grown since the last time)."""

from __future__ import annotations

import sys

from minirag_core.indexing import heap

from minirag_core.indexing import index as index_module
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document


def test_every_write_releases_freed_memory(tmp_path, embedder, monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(index_module, "release_freed_memory", lambda *args: calls.append(args) or True)
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    opened = len(calls)  # the repair on open is a write too
    index.insert([Document(id="a", text="Ada Lovelace wrote the first program."),
                  Document(id="b", text="Charles Babbage designed the Analytical Engine.")])
    index.delete(["a"])
    assert len(calls) >= opened + 2


def test_release_works_on_glibc() -> None:
    released = heap.release_freed_memory()
    assert released is sys.platform.startswith("linux")  # glibc here; a no-op elsewhere


def test_a_trim_waits_for_growth(monkeypatch) -> None:
    class FakeLibc:
        trims = 0

        def malloc_trim(self, pad: int) -> int:
            FakeLibc.trims += 1
            return 1

    monkeypatch.setattr(heap, "_glibc", lambda: FakeLibc())
    assert heap.release_freed_memory() and FakeLibc.trims == 1
    assert heap.release_freed_memory(min_growth_bytes=1 << 40) and FakeLibc.trims == 1  # no growth: skipped
    grown = bytearray(8 << 20)  # 8 MB more resident
    grown[::4096] = b"x" * len(grown[::4096])
    assert heap.release_freed_memory(min_growth_bytes=4 << 20) and FakeLibc.trims == 2
    assert heap.resident_bytes() > 8 << 20
