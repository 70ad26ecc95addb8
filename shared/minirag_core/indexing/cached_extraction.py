"""Extraction with the per-chunk cache and failure isolation that indexing relies on."""

from __future__ import annotations

import json
import logging

from minirag_core.extraction.base import Extractor
from minirag_core.extraction.identity import cache_identity
from minirag_core.llm.base import LLMError
from minirag_core.llm.cache import LLMCallCache
from minirag_core.types import Chunk, ExtractionResult

logger = logging.getLogger("minirag_core")


def extract_cached(extractor: Extractor, cache: LLMCallCache, chunks: list[Chunk]) -> list[ExtractionResult | None]:
    """Extraction results per chunk, from the cache where this extractor (the same rules,
    models and prompts: :func:`~.extraction.identity.cache_identity`) has seen the chunk."""
    found = cached_results(extractor, cache, chunks)
    missing = [i for i, result in enumerate(found) if result is None]
    if missing:
        results = extract_isolating_failures(extractor, [chunks[i] for i in missing])
        store_results(extractor, cache, [chunks[i] for i in missing], results)
        for i, result in zip(missing, results):
            found[i] = result
    return found


def cached_results(extractor: Extractor, cache: LLMCallCache, chunks: list[Chunk]) -> list[ExtractionResult | None]:
    """Each chunk's cached result by this extractor, None where it has none."""
    name = cache_identity(extractor)
    found = [cache.get(name, chunk.id) for chunk in chunks]
    return [ExtractionResult.from_json(json.loads(f)) if f is not None else None for f in found]


def store_results(extractor: Extractor, cache: LLMCallCache, chunks: list[Chunk],
                  results: list[ExtractionResult | None]) -> None:
    """Cache the results of ``chunks`` (a failed chunk's None is not cached: the index records the
    chunk, ``indexing/failed_chunks.py``, and its next write tries again)."""
    found = [(chunk.id, json.dumps(result.to_json())) for chunk, result in zip(chunks, results) if result is not None]
    if found:
        cache.put_many(cache_identity(extractor), found)


def extract_isolating_failures(extractor: Extractor, chunks: list[Chunk]) -> list[ExtractionResult | None]:
    """The extractor's results; if it fails on the batch, chunk by chunk, so one bad chunk
    costs only itself (``None``: the chunk stays searchable but adds no entities)."""
    try:
        return list(extractor.extract(chunks))
    except LLMError:
        raise  # the model server is down or refusing: stop; finished batches are kept
    except Exception:  # noqa: BLE001 - any other extractor fault is isolated, logged and reported
        if len(chunks) == 1:
            logger.exception("extraction failed for chunk %s of %s; indexed without entities",
                             chunks[0].id, chunks[0].doc_id)
            return [None]
        return [r for chunk in chunks for r in extract_isolating_failures(extractor, [chunk])]
