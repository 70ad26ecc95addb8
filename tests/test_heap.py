"""Freed heap pages go back to the system after every write."""

from __future__ import annotations

import sys

from minirag_core import heap, index as index_module
from minirag_core.index import MiniRAGIndex
from minirag_core.types import Document


def test_every_write_releases_freed_memory(tmp_path, embedder, monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(index_module, "release_freed_memory", lambda: calls.append(1) or True)
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    opened = len(calls)  # the repair on open is a write too
    index.insert([Document(id="a", text="Ada Lovelace wrote the first program."),
                  Document(id="b", text="Charles Babbage designed the Analytical Engine.")])
    index.delete(["a"])
    assert len(calls) >= opened + 2


def test_release_works_on_glibc() -> None:
    released = heap.release_freed_memory()
    assert released is sys.platform.startswith("linux")  # glibc here; a no-op elsewhere
