"""The one retrieval entry point: mode check, query mapping, the mode's ranking, fill to k.

``MiniRAGIndex``, the LangChain retriever and the LlamaIndex retrievers all retrieve through
:func:`retrieve` / :func:`aretrieve`, over any ``RetrievalSources``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any, Callable, Mapping

from minirag_core.extraction.base import QueryMapper
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.types import QueryMapping, RetrievalResult
from minirag_core.retrieval.budget import is_budget_note, set_budget_note
from minirag_core.retrieval.common import scores_follow_rank
from minirag_core.retrieval.filtered_sources import restricted
from minirag_core.retrieval.filters import Passing
from minirag_core.retrieval.extensions.aggregated import with_aggregation
from minirag_core.retrieval.modes.light import retrieve_light
from minirag_core.retrieval.modes.mini import retrieve_mini
from minirag_core.retrieval.modes.naive import retrieve_naive
from minirag_core.retrieval.sources import RetrievalSources

logger = logging.getLogger("minirag_core")

MODES = ("mini", "light", "naive")


def check_mode(mode: str) -> str:
    """``mode`` if it is a retrieval mode, else ``ValueError``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose mini, light or naive")
    return mode


FALLBACK_MAPPING_NOTE = ("the model's query mapping reply could not be read, so the query's entities and answer types "
                         "were found without it")


def map_query(mapper: QueryMapper, query: str, mode: str,
              type_pool: Callable[[], dict[str, list[str]]]) -> QueryMapping | None:
    """The query mapping ``mode`` needs (none for naive); ``type_pool`` is called only then."""
    return None if check_mode(mode) == "naive" else mapper.map_query(query, type_pool())


async def amap_query(mapper: QueryMapper, query: str, mode: str,
                     type_pool: Callable[[], dict[str, list[str]]]) -> QueryMapping | None:
    return None if check_mode(mode) == "naive" else await mapper.amap_query(query, type_pool())


def retrieve(sources: RetrievalSources, query: str, mode: str, settings: RetrievalSettings, *,
             mapping: QueryMapping | None = None, doc_metadata: Mapping[str, dict[str, Any]] | None = None,
             passing: Passing | None = None) -> RetrievalResult:
    """Rank chunks for ``query`` in ``mode`` (mini and light need the query's ``mapping``); with
    ``passing`` (what a metadata filter lets through) over the passing chunks alone."""
    if passing is not None:
        if not passing.chunks:
            check_mode(mode)
            return RetrievalResult(query=query, mode=mode, chunks=[], mapping=mapping,
                                   notes=["no document passes the metadata filter"])
        sources = restricted(sources, passing)
    if check_mode(mode) == "naive":
        result = retrieve_naive(sources, query, settings, doc_metadata)
    elif mapping is None:
        raise ValueError("mini and light modes need a query mapping")
    else:
        run = retrieve_mini if mode == "mini" else retrieve_light
        result = run(sources, query, mapping, settings, doc_metadata)
        scores_follow_rank(result.chunks)
        if mapping.source == "fallback":
            result.notes.append(FALLBACK_MAPPING_NOTE)
        if settings.aggregate and mode == "mini":
            with_aggregation(sources, result, settings)
    for note in filter(is_budget_note, result.notes):  # a retriever's caller may never read the notes
        logger.warning("%s query: %s", mode, note)
    return result


async def aretrieve(sources: RetrievalSources, query: str, mode: str, settings: RetrievalSettings, *,
                    mapping: QueryMapping | None = None, doc_metadata: Mapping[str, dict[str, Any]] | None = None,
                    passing: Passing | None = None) -> RetrievalResult:
    """:func:`retrieve` in a worker thread (ranking is CPU-bound)."""
    return await asyncio.to_thread(retrieve, sources, query, mode, settings, mapping=mapping,
                                   doc_metadata=doc_metadata, passing=passing)


def shortfall(result: RetrievalResult, k: int, available: int) -> int:
    """How many chunks ``result`` lacks to hold ``k`` (or every one of ``available`` chunks)."""
    return max(0, min(k, available) - len(result.chunks))


def fill_to_k(result: RetrievalResult, extra: RetrievalResult, k: int, token_budget: int,
              max_per_document: int = 0) -> int:
    """Top ``result`` up to ``k`` chunks with ``extra``'s next-best ones (``via="fill"``) that
    fit what is left of ``token_budget``, scored no higher than the chunk before them (their
    scores come from another ranking); with ``max_per_document`` a document already holding that
    many chunks is passed over while others can fill; the budget's note is brought up to date.
    Returns how many were added."""
    before = len(result.chunks)
    taken = {c.chunk_id for c in result.chunks}
    used = sum(c.n_tokens for c in result.chunks)
    per_doc = Counter(c.doc_id for c in result.chunks)
    for capped in ([True, False] if max_per_document > 0 else [False]):
        for chunk in extra.chunks:
            if len(result.chunks) >= k:
                break
            if chunk.chunk_id in taken or used + chunk.n_tokens > token_budget:
                continue
            if capped and per_doc[chunk.doc_id] >= max_per_document:
                continue
            chunk.via = "fill"
            result.chunks.append(chunk)
            taken.add(chunk.chunk_id)
            per_doc[chunk.doc_id] += 1
            used += chunk.n_tokens
    added = len(result.chunks) - before
    scores_follow_rank(result.chunks)
    left_out = sum(c.chunk_id not in taken and used + c.n_tokens > token_budget for c in extra.chunks)
    # the chunks the first ranking could not fit still cannot (less is left), but only it counted them
    cut_before = any(is_budget_note(n) for n in result.notes)
    set_budget_note(result.notes, len(result.chunks), k, token_budget, None if cut_before else left_out)
    if added:
        logger.warning("%s query returned %d of %d chunks; topped up with %d next-best dense chunks",
                       result.mode, before, k, added)
        result.notes.append("topped up with next-best dense chunks (via='fill')")
    else:
        logger.debug("%d of %d chunks fit the token budget of %d", before, k, token_budget)
    return added
