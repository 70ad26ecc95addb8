"""A persistent, append-only cache of model replies, and a caching LLMBackend wrapper."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import IO

from .base import LLMBackend

logger = logging.getLogger("minirag_core")


def cache_key(name: str, prompt: str, json_mode: bool) -> str:
    """sha256 over (backend name, prompt, json_mode)."""
    payload = json.dumps([name, prompt, bool(json_mode)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()


class LLMCallCache:
    """Replies keyed by :func:`cache_key`, kept in memory and in a JSONL file.

    Each ``put`` appends one line and fsyncs it, so a crash loses at most the line
    being written; unreadable lines (a truncated tail) are skipped on load.
    ``path=None`` keeps the cache in memory only. Thread-safe.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._data: dict[str, str] = {}
        self._fh: IO[str] | None = None
        self._needs_newline = False
        self.hits = 0
        self.misses = 0
        if self.path is not None:
            self._load()

    def _load(self) -> None:
        assert self.path is not None
        if not self.path.exists():
            return
        bad = 0
        raw = self.path.read_bytes()
        self._needs_newline = bool(raw) and not raw.endswith(b"\n")
        for line in raw.decode("utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                self._data[str(row["key"])] = str(row["reply"])
            except (ValueError, KeyError, TypeError):
                bad += 1
        if bad:
            logger.warning("LLM cache %s: skipped %d unreadable line(s)", self.path, bad)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def get(self, name: str, prompt: str, json_mode: bool = False) -> str | None:
        """The cached reply, or None."""
        key = cache_key(name, prompt, json_mode)
        with self._lock:
            reply = self._data.get(key)
            if reply is None:
                self.misses += 1
            else:
                self.hits += 1
            return reply

    def put(self, name: str, prompt: str, json_mode: bool, reply: str) -> None:
        """Store a reply (and append it durably to the file, if any)."""
        key = cache_key(name, prompt, json_mode)
        line = json.dumps({"key": key, "name": name, "json_mode": bool(json_mode), "reply": reply})
        with self._lock:
            self._data[key] = reply
            if self.path is None:
                return
            fh = self._open()
            fh.write(("\n" if self._needs_newline else "") + line + "\n")
            self._needs_newline = False
            fh.flush()
            os.fsync(fh.fileno())

    def _open(self) -> IO[str]:
        if self._fh is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")
        return self._fh

    def close(self) -> None:
        """Close the file handle (the cache stays usable; it reopens on demand)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def __enter__(self) -> "LLMCallCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CachedLLM:
    """An LLMBackend that answers from an :class:`LLMCallCache` before asking ``backend``.

    Keeps the wrapped backend's ``name``, so cache keys and extractor names are unchanged.
    """

    def __init__(self, backend: LLMBackend, cache: LLMCallCache) -> None:
        self.backend = backend
        self.cache = cache
        self.name = backend.name

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        """Cached reply, else the backend's (then cached)."""
        cached = self.cache.get(self.name, prompt, json_mode)
        if cached is not None:
            return cached
        reply = self.backend.complete(prompt, json_mode=json_mode)
        self.cache.put(self.name, prompt, json_mode, reply)
        return reply

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        """Async :meth:`complete`."""
        cached = self.cache.get(self.name, prompt, json_mode)
        if cached is not None:
            return cached
        reply = await self.backend.acomplete(prompt, json_mode=json_mode)
        self.cache.put(self.name, prompt, json_mode, reply)
        return reply
