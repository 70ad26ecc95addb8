"""Sec. 3.2.1 query semantic mapping with a language model (query_to_keyword prompt)."""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

from minirag_core.extraction.base import QueryMapper
from minirag_core.retrieval.query.reply import parse_query_mapping
from minirag_core.llm.base import LLMBackend
from minirag_core.llm.cache import CachedLLM, LLMCallCache
from minirag_core.llm.prompts import build_query_prompt
from minirag_core.retrieval.query.answer_types import held_types
from minirag_core.types import QueryMapping

logger = logging.getLogger("minirag_core")


def _quote(text: str) -> str:
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def format_type_pool(type_pool: Mapping[str, Sequence[str]], max_examples: int | None = None) -> str:
    """Render the answer-type pool as in the paper: ``{'PERSON': ['JANE DOE', ...], ...}``."""
    items = []
    for type_name, examples in type_pool.items():
        shown = list(examples)[:max_examples] if max_examples is not None else list(examples)
        items.append(f" {_quote(type_name)}: [{', '.join(_quote(e) for e in shown)}]")
    return "{\n" + ",\n".join(items) + "\n}"


def canonical_types(types: Sequence[str], type_pool: Mapping[str, Sequence[str]]) -> list[str]:
    """Map predicted types onto the pool's spelling (case-insensitive); drop those the pool lacks.

    With an empty pool the predictions are kept as they are. At most 3 are returned.
    """
    if not type_pool:
        return list(types)[:3]
    held = held_types(types, [str(k) for k in type_pool])
    if len(held) < len(set(t.strip().upper() for t in types)):
        logger.debug("answer types %r not all in the type pool; kept %r", list(types), held)
    return held[:3]


class LLMQueryMapper:
    """QueryMapper asking a model for answer types and query entities (JSON mode).

    A malformed or empty reply gives ``source="fallback"``: the ``fallback`` mapper's
    entities and types where one is given (the offline mapper in an index), else the query's
    own phrases. An :class:`LLMError` from the model propagates.
    """

    def __init__(self, llm: LLMBackend, cache: LLMCallCache | None = None,
                 fallback: QueryMapper | None = None) -> None:
        self.name = f"llm:{llm.name}"
        self.llm: LLMBackend = CachedLLM(llm, cache) if cache is not None else llm
        self.fallback = fallback

    def _finish(self, reply: str, query: str, type_pool: Mapping[str, Sequence[str]]) -> QueryMapping:
        mapping = parse_query_mapping(reply, query)
        mapping.answer_types = canonical_types(mapping.answer_types, type_pool)
        return mapping

    @staticmethod
    def _as_fallback(mapping: QueryMapping) -> QueryMapping:
        logger.warning("query mapping: the model's reply was unusable; the offline mapping is used")
        mapping.source = "fallback"
        return mapping

    def map_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        """Map ``query`` to its entities and up to 3 answer types from ``type_pool``."""
        reply = self.llm.complete(build_query_prompt(query, format_type_pool(type_pool)), json_mode=True)
        mapping = self._finish(reply, query, type_pool)
        if mapping.source == "fallback" and self.fallback is not None:
            return self._as_fallback(self.fallback.map_query(query, type_pool))
        return mapping

    async def amap_query(self, query: str, type_pool: dict[str, list[str]]) -> QueryMapping:
        """Async :meth:`map_query`."""
        reply = await self.llm.acomplete(build_query_prompt(query, format_type_pool(type_pool)), json_mode=True)
        mapping = self._finish(reply, query, type_pool)
        if mapping.source == "fallback" and self.fallback is not None:
            return self._as_fallback(await self.fallback.amap_query(query, type_pool))
        return mapping
