"""A write counter on a ``PropertyGraphStore`` object: readers tell from it, without reading the
store, whether anything was written through that object since they last looked.

``watch(store)`` wraps the object's write methods once (every reader shares the wrappers); each
write, once finished, adds one to ``write_count(store)``. Writes that bypass the object (another
process, another store object over the same files or server) are not counted.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

__all__ = ["watch", "write_count"]

#: the write methods of LlamaIndex's ``PropertyGraphStore`` (``structured_query`` may write)
WRITE_METHODS = ("upsert_nodes", "upsert_relations", "upsert_llama_nodes", "delete", "delete_llama_nodes",
                 "structured_query")
_COUNT = "_minirag_write_count"
_LOCK = threading.Lock()


def _bump(store: Any) -> None:
    with _LOCK:
        setattr(store, _COUNT, getattr(store, _COUNT, 0) + 1)


def _counted(store: Any, method: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
    if is_async:
        @functools.wraps(method)
        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await method(*args, **kwargs)
            finally:  # counted once done: a reader that looked mid-write looks again
                _bump(store)
        return counted_async

    @functools.wraps(method)
    def counted(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        finally:
            _bump(store)
    return counted


def watch(store: Any) -> bool:
    """Count the writes made through ``store`` (idempotent); False when the object takes no new
    attributes (its readers must then compare the store's content)."""
    with _LOCK:
        if getattr(store, _COUNT, None) is not None:
            return True
        try:
            setattr(store, _COUNT, 0)
        except (AttributeError, TypeError, ValueError):
            return False
        for name in WRITE_METHODS:
            for attr, is_async in ((name, False), ("a" + name, True)):
                method = getattr(store, attr, None)
                if method is not None:
                    setattr(store, attr, _counted(store, method, is_async))
        return True


def write_count(store: Any) -> int | None:
    """How many writes went through a watched ``store`` (None if it is not watched)."""
    return getattr(store, _COUNT, None)
