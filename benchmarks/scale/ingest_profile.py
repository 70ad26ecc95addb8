"""Where an index build's time goes: exclusive wall seconds per phase, measured by wrapping the
functions the write path calls (no change to the library). A phase entered inside another is
subtracted from the outer one, so the phases add up to the time spent inside any of them."""

from __future__ import annotations

import functools
import threading
import time
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Iterator

#: (module or class path, attribute, phase); a phase ending in ":" takes the collection argument
TARGETS: list[tuple[str, str, str]] = [
    ("minirag_core.indexing.batching", "iter_chunks", "chunking"),
    ("minirag_core.indexing.workers.IndexWorkers", "extract_here", "extraction: rules and reading"),
    ("minirag_core.extraction.offline_extractor", "parse", "extraction: spaCy parse"),
    ("minirag_core.extraction.entity_typing.EntityTyper", "type_of", "extraction: zero-shot typing"),
    ("minirag_core.llm.cache.LLMCallCache", "put_many", "saves: extraction cache"),
    ("minirag_core.graph.heterogeneous", "add_chunk", "graph: add chunks"),
    ("minirag_core.indexing.graph_writes", "consolidate_aliases", "graph: aliases"),
    ("minirag_core.indexing.graph_writes", "sync_vectors", "vectors: sync bookkeeping"),
    ("minirag_core.search.vectors.VectorIndex", "upsert", "vectors:"),
    ("minirag_core.indexing.index.MiniRAGIndex", "_after_write", "after write"),
    ("minirag_core.indexing.index", "tokenize", "lexical tokens"),
    ("minirag_core.storage.token_cache.TokenCache", "put", "saves: lexical tokens"),
]


def _resolve(path: str) -> Any:
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(path)


class PhaseTimer:
    """Exclusive seconds per phase; phases of other threads than the creator's (the insert's
    extraction thread) are reported apart, as "[overlapped] ...", outside the total."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._local = threading.local()
        self._thread = threading.get_ident()
        self._lock = threading.Lock()

    @property
    def _stack(self) -> list[list[Any]]:  # [phase, start, child seconds], per thread
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if threading.get_ident() != self._thread:
            name = f"[overlapped] {name}"
        frame = [name, time.perf_counter(), 0.0]
        stack = self._stack
        stack.append(frame)
        try:
            yield
        finally:
            stack.pop()
            spent = time.perf_counter() - frame[1]
            with self._lock:
                self.seconds[name] = self.seconds.get(name, 0.0) + spent - frame[2]
            if stack:
                stack[-1][2] += spent

    def current(self) -> str:
        stack = self._stack
        return stack[-1][0].removeprefix("[overlapped] ") if stack else ""

    def wrap(self, fn: Callable[..., Any], name: str) -> Callable[..., Any]:
        import inspect

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen(*args: Any, **kwargs: Any) -> Iterator[Any]:
                it = fn(*args, **kwargs)
                while True:
                    with self.phase(name):
                        try:
                            item = next(it)
                        except StopIteration:
                            return
                    yield item
            return gen

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            label = name
            if name.endswith(":"):  # VectorIndex.upsert(self, collection, ...)
                label = f"{name} {args[1]}"
            with self.phase(label):
                return fn(*args, **kwargs)
        return call

    @contextmanager
    def installed(self, embedder: Any = None, store: Any = None) -> Iterator["PhaseTimer"]:
        """Wrap every target (and ``embedder.embed`` / ``store.upsert`` of these objects) while inside."""
        with ExitStack() as undo:
            for owner_path, attr, name in TARGETS:
                owner = _resolve(owner_path)
                original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
                setattr(owner, attr, self.wrap(original, name))
                undo.callback(setattr, owner, attr, original)
            for obj, attr, prefix in ((embedder, "embed", "embed"), (store, "upsert", "chroma")):
                if obj is None:
                    continue
                original = getattr(obj, attr)

                def timed(*args: Any, _original: Any = original, _prefix: str = prefix, **kwargs: Any) -> Any:
                    outer = self.current()
                    where = outer.split(" ", 1)[1] if outer.startswith("vectors: ") else outer or "other"
                    with self.phase(f"{_prefix}: {where}"):
                        return _original(*args, **kwargs)
                setattr(obj, attr, timed)
                undo.callback(delattr, obj, attr)
            yield self

    def rows(self, total: float) -> list[tuple[str, float]]:
        """Phases largest first, and the rest of ``total`` as "other"."""
        found = sorted(self.seconds.items(), key=lambda kv: (kv[0].startswith("["), -kv[1]))
        timed = sum(v for k, v in self.seconds.items() if not k.startswith("["))
        return found + [("other (untimed)", max(0.0, total - timed))]
