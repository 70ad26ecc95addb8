"""A write counter and journal on a ``PropertyGraphStore`` object: readers tell from it, without
reading the store, whether anything was written through that object since they last looked, and
which nodes an insert touched (so they read only that neighbourhood).

``watch(store)`` wraps the object's write methods once (every reader shares the wrappers); each
write, once finished, adds one to ``write_count(store)`` and a ``Write`` to the journal. Writes
that bypass the object (another process, another store object over the same files or server)
are not counted.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from llama_index.core.graph_stores.types import ChunkNode

__all__ = ["watch", "write_count", "Write", "writes_since"]

#: the write methods of LlamaIndex's ``PropertyGraphStore`` (``structured_query`` may write)
WRITE_METHODS = ("upsert_nodes", "upsert_relations", "upsert_llama_nodes", "delete", "delete_llama_nodes",
                 "structured_query")
_COUNT = "_minirag_write_count"
_JOURNAL = "_minirag_write_journal"
#: writes remembered per store; a reader further behind reads the whole store
JOURNAL_LIMIT = 10_000
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Write:
    """What one write added: ``nodes`` (ids of nodes upserted, chunk nodes in ``chunks``) and
    ``relations`` (label, source id, target id). ``known`` is False for any other write (a
    delete, a structured query, arguments of an unknown shape): readers must read the store."""

    known: bool
    nodes: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()
    relations: tuple[tuple[str, str, str], ...] = field(default=())


def _describe(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Write:
    items = args[0] if args else next(iter(kwargs.values()), None)
    if not isinstance(items, (list, tuple)):  # e.g. a generator the write consumed
        return Write(False)
    try:
        if name == "upsert_nodes":
            ids = tuple(str(n.id) for n in items)
            chunks = tuple(str(n.id) for n in items if isinstance(n, ChunkNode))
            return Write(True, nodes=ids, chunks=chunks)
        if name == "upsert_llama_nodes":
            ids = tuple(str(n.id_) for n in items)
            return Write(True, nodes=ids, chunks=ids)
        if name == "upsert_relations":
            return Write(True, relations=tuple((str(r.label), str(r.source_id), str(r.target_id)) for r in items))
    except (AttributeError, TypeError):
        pass
    return Write(False)


def _record(store: Any, write: Write) -> None:
    with _LOCK:
        setattr(store, _COUNT, getattr(store, _COUNT, 0) + 1)
        journal = getattr(store, _JOURNAL)
        journal.append(write)
        del journal[:-JOURNAL_LIMIT]


def _counted(store: Any, name: str, method: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    if is_async:
        @functools.wraps(method)
        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            done = False
            try:
                result = await method(*args, **kwargs)
                done = True
                return result
            finally:  # counted once done: a reader that looked mid-write looks again
                _record(store, _describe(name, args, kwargs) if done else Write(False))
        return counted_async

    @functools.wraps(method)
    def counted(*args: Any, **kwargs: Any) -> Any:
        done = False
        try:
            result = method(*args, **kwargs)
            done = True
            return result
        finally:
            _record(store, _describe(name, args, kwargs) if done else Write(False))
    return counted


def watch(store: Any) -> bool:
    """Count the writes made through ``store`` (idempotent); False when the object takes no new
    attributes (its readers must then compare the store's content)."""
    with _LOCK:
        if getattr(store, _COUNT, None) is not None:
            return True
        try:
            setattr(store, _COUNT, 0)
            setattr(store, _JOURNAL, [])
        except (AttributeError, TypeError, ValueError):
            return False
        for name in WRITE_METHODS:
            for attr, is_async in ((name, False), ("a" + name, True)):
                method = getattr(store, attr, None)
                if method is not None:
                    setattr(store, attr, _counted(store, name, method, is_async))
        return True


def write_count(store: Any) -> int | None:
    """How many writes went through a watched ``store`` (None if it is not watched)."""
    return getattr(store, _COUNT, None)


def writes_since(store: Any, count: int) -> list[Write] | None:
    """The writes made through a watched ``store`` after its ``write_count`` was ``count``
    (None if it is not watched or the journal no longer reaches back that far)."""
    with _LOCK:
        total, journal = getattr(store, _COUNT, None), getattr(store, _JOURNAL, None)
        if total is None or journal is None or total - count > len(journal) or count > total:
            return None
        return list(journal[len(journal) - (total - count):])
