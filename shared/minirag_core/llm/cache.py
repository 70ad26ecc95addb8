"""A persistent, append-only cache of model replies, and a caching LLMBackend wrapper."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import IO

from minirag_core.llm.base import LLMBackend

logger = logging.getLogger("minirag_core")


def cache_key(name: str, prompt: str, json_mode: bool) -> str:
    """sha256 over (backend name, prompt, json_mode)."""
    payload = json.dumps([name, prompt, bool(json_mode)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8", errors="surrogatepass")).hexdigest()


class LLMCallCache:
    """Replies keyed by :func:`cache_key`, in a JSONL file (or in memory with ``path=None``).

    Each ``put`` appends one line and fsyncs it, so a crash loses at most the line
    being written; unreadable lines (a truncated tail) are skipped when the file is first read (on
    first use, not on open). Only each key's
    line offset is held in memory (a reply is read from the file when asked for), so the
    cache costs a few hundred bytes per entry however long the replies. Thread-safe.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._memory: dict[str, str] = {}   # path=None: the replies themselves
        self._offsets: dict[str, int] = {}  # with a file: where each key's line starts
        self._fh: IO[bytes] | None = None
        self._reader: IO[bytes] | None = None
        self._needs_newline = False
        self.hits = 0
        self.misses = 0
        self._loaded = self.path is None  # the file is read on first use: a query never reads it

    def _load(self) -> None:
        """Index the file's keys (the caller holds the lock)."""
        if self._loaded:
            return
        self._loaded = True
        assert self.path is not None
        if not self.path.exists():
            return
        bad, offset, line = 0, 0, b""
        with open(self.path, "rb") as handle:
            for line in handle:
                key = self._key_of(line)
                if key is not None:
                    self._offsets[key] = offset
                elif line.strip():
                    bad += 1
                offset += len(line)
        self._needs_newline = bool(line) and not line.endswith(b"\n")
        if bad:
            logger.warning("LLM cache %s: skipped %d unreadable line(s)", self.path, bad)

    @staticmethod
    def _parse(line: bytes) -> tuple[str, str] | None:
        """(key, reply) of a whole cache line, or None if it is unreadable."""
        try:
            row = json.loads(line.decode("utf-8", errors="replace"))
            return str(row["key"]), str(row["reply"])
        except (ValueError, KeyError, TypeError):
            return None

    def _key_of(self, line: bytes) -> str | None:
        found = self._parse(line) if line.strip() else None
        return found[0] if found is not None else None

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return len(self._offsets) if self.path is not None else len(self._memory)

    def _read(self, key: str) -> str | None:
        if self.path is None:
            return self._memory.get(key)
        self._load()
        offset = self._offsets.get(key)
        if offset is None:
            return None
        if self._reader is None:
            self._reader = open(self.path, "rb")
        self._reader.seek(offset)
        found = self._parse(self._reader.readline())
        return found[1] if found is not None and found[0] == key else None

    def get(self, name: str, prompt: str, json_mode: bool = False) -> str | None:
        """The cached reply, or None."""
        key = cache_key(name, prompt, json_mode)
        with self._lock:
            reply = self._read(key)
            if reply is None:
                self.misses += 1
            else:
                self.hits += 1
            return reply

    def put(self, name: str, prompt: str, json_mode: bool, reply: str) -> None:
        """Store a reply (and append it durably to the file, if any)."""
        self.put_many(name, [(prompt, reply)], json_mode)

    def put_many(self, name: str, replies: list[tuple[str, str]], json_mode: bool = False) -> None:
        """Store (prompt, reply) pairs, appended to the file (if any) with one fsync for all."""
        lines = []
        for prompt, reply in replies:
            key = cache_key(name, prompt, json_mode)
            lines.append((key, reply, json.dumps({"key": key, "name": name, "json_mode": bool(json_mode),
                                                  "reply": reply})))
        with self._lock:
            if self.path is None:
                self._memory.update((key, reply) for key, reply, _ in lines)
                return
            if not lines:
                return
            self._load()
            fh = self._open()
            fh.seek(0, os.SEEK_END)
            start = fh.tell() + self._needs_newline
            data, offsets = bytearray(b"\n" if self._needs_newline else b""), {}
            for key, _, line in lines:
                offsets[key] = start + len(data) - self._needs_newline
                data += (line + "\n").encode("utf-8")
            fh.write(bytes(data))
            self._needs_newline = False
            fh.flush()
            os.fsync(fh.fileno())
            self._offsets.update(offsets)  # read back only if the line there is this key's

    def _open(self) -> IO[bytes]:
        if self._fh is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "ab")
        return self._fh

    def close(self) -> None:
        """Close the file handles (the cache stays usable; it reopens them on demand)."""
        with self._lock:
            for handle in (self._fh, self._reader):
                if handle is not None:
                    handle.close()
            self._fh = self._reader = None

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
