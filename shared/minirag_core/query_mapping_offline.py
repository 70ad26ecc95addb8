"""Sec. 3.2.1 without a language model: query entities by rules, answer types by rules + zero-shot."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from .entity_typing import TYPE_POOL, EntityTyper, answer_types_for_query, new_typer
from .extraction.query_entities import extract_query_entities
from .scores import one_blas_thread
from .types import QueryMapping


def _spare_core() -> bool:
    return len(os.sched_getaffinity(0)) > 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) > 1


@contextmanager
def _side_by_side(embedder: Any, texts: list[str]) -> Iterator[Future | None]:
    """Embed ``texts`` in a worker thread for the duration of the block (``None`` when the
    embedder is not safe to call from two threads, there is no second core, or no text): two
    small passes on two cores take about the time of one, a packed pass of both about 1.4x."""
    if not texts or not getattr(embedder, "parallel_embed", False) or not _spare_core():
        yield None
        return
    with one_blas_thread(), ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(embedder.embed, texts)
        yield future
        future.result()


class OfflineQueryMapper:
    """Maps a question to its entities (the offline extractor's span rules) and up to 3 answer types.

    When ``type_pool`` (type -> example names, as stored by the index) is non-empty, each
    predicted type is replaced by the nearest pool type (itself when present; otherwise by
    embedding similarity of the type descriptions).
    """

    def __init__(self, embedder=None, *, typer: EntityTyper | None = None, max_types: int = 3,
                 max_entities: int = 8) -> None:
        self._embedder = embedder if embedder is not None else (typer.embedder if typer else None)
        self._typer = typer
        self.max_types = max_types
        self.max_entities = max_entities
        self._pool_cache: dict[tuple[str, ...], np.ndarray] = {}

    @property
    def typer(self) -> EntityTyper:
        if self._typer is None:
            self._typer = new_typer(self._embedder)
        return self._typer

    def _describe(self, t: str) -> str:
        return TYPE_POOL.get(t.upper(), t.lower())

    def _to_pool(self, types: list[str], pool_types: list[str]) -> list[str]:
        upper = {p.upper(): p for p in pool_types}
        key = tuple(pool_types)
        out: list[str] = []
        for t in types:
            if t.upper() in upper:
                mapped = upper[t.upper()]
            else:  # only now embed the pool's descriptions (most queries never need them)
                if key not in self._pool_cache:
                    self._pool_cache[key] = self.typer.embedder.embed([self._describe(p) for p in pool_types])
                pool_vecs = self._pool_cache[key]
                vec = self.typer.embedder.embed([self._describe(t)])[0]
                order = np.argsort(-(pool_vecs @ vec))
                mapped = next((pool_types[i] for i in order if pool_types[i] not in out), None)
            if mapped is not None and mapped not in out:
                out.append(mapped)
        return out[: self.max_types]

    def map_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        entities = extract_query_entities(query, max_entities=self.max_entities)
        # retrieval embeds the query and its entities next (the embedder's cache then serves
        # them): both in one pass, or with a second core the names beside the query's typing
        embedder = self.typer.embedder
        with _side_by_side(embedder, entities) as names:
            embedder.embed([query] if names is not None else [query, *entities])
            types = answer_types_for_query(query, typer=self.typer, k=self.max_types)
        pool_types = [t for t in (type_pool or {}) if t]
        if pool_types:
            types = self._to_pool(types, pool_types)
        return QueryMapping(entities=entities, answer_types=types, source="offline")

    async def amap_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        return await asyncio.to_thread(self.map_query, query, type_pool)


__all__ = ["OfflineQueryMapper", "extract_query_entities"]
