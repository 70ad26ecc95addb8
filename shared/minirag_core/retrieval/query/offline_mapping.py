"""Sec. 3.2.1 without a language model: query entities by rules, answer types by rules + zero-shot."""

from __future__ import annotations

import asyncio

import numpy as np

from minirag_core.concurrency import beside
from minirag_core.extraction.entity_typing import (
    TYPE_POOL, EntityTyper, answer_types_for_query, new_typer, rule_answer_types,
)
from minirag_core.retrieval.query.entities import extract_query_entities
from minirag_core.retrieval.query.technical_types import technical_types
from minirag_core.types import QueryMapping


class OfflineQueryMapper:
    """Maps a question to its entities (the offline extractor's span rules) and up to 3 answer types.

    When ``type_pool`` (type -> example names, as stored by the index) is non-empty, the types a
    technical question's shape asks for come first where the pool holds them (followed only by
    those the question words imply, not by zero-shot guesses), and each predicted
    type is replaced by the nearest pool type (itself when present; otherwise by embedding
    similarity of the type descriptions): only types the graph holds are proposed.
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
        # retrieval embeds the entities next (the embedder's cache then serves them) and reuses
        # the query's vector: both in one pass, or with a second core the names beside the query's typing
        embedder = self.typer.embedder
        parallel = bool(entities) and getattr(embedder, "parallel_embed", False)
        with beside(lambda: embedder.embed(entities), parallel) as names:
            vector = embedder.embed([query] if names is not None else [query, *entities])[0]
            types = answer_types_for_query(query, typer=self.typer, k=self.max_types, vector=vector)
        pool_types = [t for t in (type_pool or {}) if t]
        technical = technical_types(query, pool_types) if pool_types else []
        if technical:  # a technical shape: its types and the question words' (no zero-shot guess)
            types = list(dict.fromkeys(technical + rule_answer_types(query)))
        if pool_types:  # only types the graph holds
            types = self._to_pool(types, pool_types)
        return QueryMapping(entities=entities, answer_types=types, source="offline", query_vector=vector,
                            vector_model=getattr(embedder, "name", ""))

    async def amap_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        return await asyncio.to_thread(self.map_query, query, type_pool)


__all__ = ["OfflineQueryMapper"]
