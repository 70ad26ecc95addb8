"""Whether the vectors agreed with the graph when the last write ended.

Reconciling Chroma with the graph on open reads every id of every collection (seconds at
100,000s of entities). A marker file in the workdir says "dirty" while a write is under way and
"clean", with each collection's vector count, once it has ended: a new process then reconciles
only after a crash mid-write (the marker stays dirty) or when the counts it finds differ (the
vectors changed under the workdir), and skips it otherwise.
"""

from __future__ import annotations

from pathlib import Path

from minirag_core.storage.base import VectorStore, atomic_write_json, read_json
from minirag_core.search.vectors import CHUNKS, ENTITIES, RELATIONS, WINDOWS

STATE_FILE = "vectors_state.json"
_COLLECTIONS = (CHUNKS, ENTITIES, RELATIONS, WINDOWS)


def vector_counts(store: VectorStore) -> dict[str, int]:
    """Vectors per collection (a count per collection, no id is read)."""
    return {name: int(store.count(name)) for name in _COLLECTIONS}


def mark_writing(path: Path | None) -> None:
    """Before a write: until it ends, a new process must reconcile."""
    if path is not None:
        atomic_write_json(path, {"clean": False})


def mark_clean(path: Path | None, store: VectorStore) -> None:
    """After a write (or a reconciliation) ended: graph and vectors agree."""
    if path is not None:
        atomic_write_json(path, {"clean": True, "counts": vector_counts(store)})


def known_clean(path: Path | None, store: VectorStore) -> bool:
    """Whether the last write ended cleanly and the vectors are still as it left them."""
    if path is None:
        return False
    try:
        state = read_json(path, None)
    except (OSError, ValueError):
        return False
    if not isinstance(state, dict) or state.get("clean") is not True:
        return False
    return state.get("counts") == vector_counts(store)
