"""Sec. 3.2.1 without a language model: query entities by rules, answer types by question words."""

from __future__ import annotations

import asyncio

from minirag_core.extraction.entity_typing import EntityTyper, new_typer
from minirag_core.retrieval.query.entities import extract_query_entities
from minirag_core.retrieval.query.answer_types import held_types, rule_answer_types
from minirag_core.retrieval.query.technical_types import technical_types
from minirag_core.types import QueryMapping


class OfflineQueryMapper:
    """Maps a question to its entities (the offline extractor's span rules) and up to 3 answer types.

    Answer types come only from ``type_pool`` (type -> example names, as stored by the index):
    the types a technical question's shape asks for, then those its question words imply, each
    kept only where the graph holds it; a question that implies no held type gets none.
    """

    def __init__(self, embedder=None, *, typer: EntityTyper | None = None, max_types: int = 3,
                 max_entities: int = 8) -> None:
        self._embedder = embedder if embedder is not None else (typer.embedder if typer else None)
        self._typer = typer
        self.max_types = max_types
        self.max_entities = max_entities

    @property
    def typer(self) -> EntityTyper:
        if self._typer is None:
            self._typer = new_typer(self._embedder)
        return self._typer

    def map_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        entities = extract_query_entities(query, max_entities=self.max_entities)
        # nothing is embedded here: retrieval embeds the question together with the entities naming
        # no entity node (seed selection takes a named one's stored vector), in one encoder pass
        pool_types = list(type_pool or {})
        types = held_types(technical_types(query, pool_types) + rule_answer_types(query), pool_types)[: self.max_types]
        return QueryMapping(entities=entities, answer_types=types, source="offline")

    async def amap_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        return await asyncio.to_thread(self.map_query, query, type_pool)


__all__ = ["OfflineQueryMapper"]
