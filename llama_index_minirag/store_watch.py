"""A write counter and journal on a ``PropertyGraphStore`` object: readers tell from it, without
reading the store, whether anything was written through that object since they last looked, and
which nodes an insert touched (so they read only that neighbourhood).

``watch(store, access)`` wraps the object's write methods once (every reader shares the
wrappers): ``upsert_nodes``, ``upsert_relations``, ``upsert_llama_nodes``, ``delete``,
``delete_llama_nodes`` and their async forms - never the read methods, nor ``structured_query``
(which the stores' own reads call). Each outermost write runs the store access's
``before_write`` first and, once finished, its ``after_write`` (``after_failed_write`` if it
raised; both bump the store's version where it keeps one), adds one to
``write_count(store)`` and a ``Write`` to the journal with the store's version before and
after it. Writes that bypass the object (another process, ``structured_query``) are not in
the journal; on stores that keep a version, readers see them as a version the journal does not
explain.
"""

from __future__ import annotations

import functools
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from llama_index.core.graph_stores.types import ChunkNode, EntityNode

from .store_access import written_items
from .store_readers import access_for

__all__ = ["watch", "write_count", "Write", "writes_since", "watched_access", "explained",
           "ForeignExtractionWarning"]

#: the write methods of LlamaIndex's ``PropertyGraphStore``
WRITE_METHODS = ("upsert_nodes", "upsert_relations", "upsert_llama_nodes", "delete", "delete_llama_nodes")
_COUNT = "_minirag_write_count"
_JOURNAL = "_minirag_write_journal"
_ACCESS = "_minirag_access"
_DEPTH = threading.local()
#: writes remembered per store; a reader further behind reads the whole store
JOURNAL_LIMIT = 10_000
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Write:
    """What one write added: ``nodes`` (ids of nodes upserted, chunk nodes in ``chunks``) and
    ``relations`` (label, source id, target id). ``known`` is False for any other write (a
    delete, arguments of an unknown shape): readers must read the store. ``before`` / ``after``:
    the store's version around the write (None where the store keeps none)."""

    known: bool
    nodes: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()
    relations: tuple[tuple[str, str, str], ...] = field(default=())
    before: str | None = None
    after: str | None = None


def _describe(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Write:
    items = written_items(args, kwargs)
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


class _Outermost:
    """True inside the outermost write of this thread (``upsert_llama_nodes`` calls
    ``upsert_nodes``: only the outer call is journalled)."""

    def __enter__(self) -> bool:
        depth = getattr(_DEPTH, "n", 0)
        _DEPTH.n = depth + 1
        return depth == 0

    def __exit__(self, *exc: Any) -> None:
        _DEPTH.n -= 1


class ForeignExtractionWarning(UserWarning):
    """Entities without MiniRAG's records written to a store MiniRAG reads."""


_WARNED = "_minirag_warned_foreign"


def _check_foreign(store: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Warn (once per store) when entity nodes without MiniRAG's records are written: an insert
    through LlamaIndex's default kg extractors, which MiniRAG retrieval ignores."""
    if name != "upsert_nodes" or getattr(store, _WARNED, False):
        return
    items = written_items(args, kwargs)
    if isinstance(items, (list, tuple)) and any(
            isinstance(n, EntityNode) and "entity_id" not in (n.properties or {}) for n in items):
        setattr(store, _WARNED, True)
        warnings.warn(
            "entities without MiniRAG records are being written to a MiniRAG graph (LlamaIndex's default kg "
            "extractors?): MiniRAG retrieval ignores them. Insert through MiniRAG: "
            "llama_index_minirag.open_property_graph(store) or PropertyGraphIndex.from_existing(store, "
            "**minirag_index_kwargs())", ForeignExtractionWarning, stacklevel=4)


def _finish(store: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], done: bool,
            before: str | None) -> None:
    access = getattr(store, _ACCESS)
    after: str | None = None
    try:
        if done:
            access.after_write(name, args, kwargs)
        else:
            access.after_failed_write(name, args, kwargs)
        after = access.version() if access.versioned else None
    except BaseException:
        done = False  # the bookkeeping failed (and undid what it could): readers read the store
        raise
    finally:  # counted once done: a reader that looked mid-write looks again
        write = _describe(name, args, kwargs) if done else Write(False)
        _record(store, Write(write.known, write.nodes, write.chunks, write.relations, before,
                             after if done else None))


def _counted(store: Any, name: str, method: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    access = getattr(store, _ACCESS)

    if is_async:
        @functools.wraps(method)
        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            with _Outermost() as outermost:
                if not outermost:
                    return await method(*args, **kwargs)
                _check_foreign(store, name, args, kwargs)
                before = access.version() if access.versioned else None
                access.before_write(name, args, kwargs)
                done = False
                try:
                    result = await method(*args, **kwargs)
                    done = True
                    return result
                finally:
                    _finish(store, name, args, kwargs, done, before)
        return counted_async

    @functools.wraps(method)
    def counted(*args: Any, **kwargs: Any) -> Any:
        with _Outermost() as outermost:
            if not outermost:
                return method(*args, **kwargs)
            _check_foreign(store, name, args, kwargs)
            before = access.version() if access.versioned else None
            access.before_write(name, args, kwargs)
            done = False
            try:
                result = method(*args, **kwargs)
                done = True
                return result
            finally:
                _finish(store, name, args, kwargs, done, before)
    return counted


def watch(store: Any, access: Any = None) -> bool:
    """Count the writes made through ``store`` (idempotent); False when the object takes no new
    attributes (its readers must then compare the store's content). ``access``: the store's
    :class:`~llama_index_minirag.store_access.StoreAccess` (default: the one for its kind)."""
    with _LOCK:
        if getattr(store, _COUNT, None) is not None:
            return True
        if access is None:
            access = access_for(store)
        try:
            setattr(store, _ACCESS, access)
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


def watched_access(store: Any) -> Any:
    """The store access a watched ``store`` writes through (None if it is not watched)."""
    return getattr(store, _ACCESS, None)


def explained(seen: str | None, writes: list[Write], now: str | None) -> bool:
    """Whether ``writes`` (this process's, in order) account for every version change from
    ``seen`` to ``now``: each began at the version the previous one left (always true where the
    store keeps no version)."""
    if seen is None and now is None:
        return True
    version = seen
    for write in writes:
        if write.before != version or write.after is None:
            return False
        version = write.after
    return version == now
