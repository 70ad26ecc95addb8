"""Sec. 3.1 extraction with a language model: one prompt per chunk, optional gleaning."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
from typing import Sequence

from tqdm.auto import tqdm

from minirag_core.extraction.base import Extractor
from minirag_core.llm.base import LLMBackend
from minirag_core.llm.cache import CachedLLM, LLMCallCache
from minirag_core.graph.names import clean_display_name, normalize_entity_name
from minirag_core.llm.prompts import DEFAULT_ENTITY_TYPES, GLEAN_CONTINUE, GLEAN_IF_LOOP, build_extraction_prompt
from minirag_core.types import Chunk, ExtractedEntity, ExtractedRelation, ExtractionResult
from minirag_core.extraction import record_parser, subjects
from minirag_core.extraction.formats import split_sentences
from minirag_core.extraction.identity import digest, module_digest
from minirag_core.extraction.record_parser import parse_extraction
from minirag_core.extraction.subjects import chunk_subject, subject_names

MAX_SUBJECT_DESCRIPTION = 300

logger = logging.getLogger("minirag_core")


def _merge_text(old: str, new: str, sep: str) -> str:
    if not new or new in old:
        return old
    return f"{old}{sep}{new}" if old else new


def merge_results(results: Sequence[ExtractionResult]) -> ExtractionResult:
    """Merge one chunk's results (first pass + gleanings), folding repeated names."""
    merged = ExtractionResult()
    entities: dict[str, ExtractedEntity] = {}
    relations: dict[tuple[str, str], ExtractedRelation] = {}
    for res in results:
        merged.unparsed_records += res.unparsed_records
        for ent in res.entities:
            key = normalize_entity_name(ent.name) or ent.name
            if key not in entities:
                entities[key] = ExtractedEntity(ent.name, ent.type, ent.description)
            else:
                entities[key].description = _merge_text(entities[key].description, ent.description, "\n")
        for rel in res.relations:
            key = (normalize_entity_name(rel.source) or rel.source, normalize_entity_name(rel.target) or rel.target)
            if key not in relations:
                relations[key] = ExtractedRelation(rel.source, rel.target, rel.description, rel.keywords, rel.weight)
            else:
                old = relations[key]
                old.description = _merge_text(old.description, rel.description, "\n")
                old.keywords = _merge_text(old.keywords, rel.keywords, ", ")
                old.weight = max(old.weight, rel.weight)
        for kw in res.content_keywords:
            if kw not in merged.content_keywords:
                merged.content_keywords.append(kw)
    merged.entities = list(entities.values())
    merged.relations = list(relations.values())
    return merged


def add_subject(result: ExtractionResult, chunk: Chunk) -> ExtractionResult:
    """Record what the chunk is about (its title line or heading, read from the text's shape as
    the offline extractor reads it), so bridges reach it on a model-built graph too: the model's
    entity of that name, or a new entity for the title when the model left it out."""
    title = chunk_subject(chunk.text, chunk.order)
    key = normalize_entity_name(title) if title else ""
    if not title or not key:
        return result
    names = {normalize_entity_name(e.name): e.name for e in result.entities}
    if key not in names:
        body = chunk.text.strip().split("\n", 1)[1].strip() if "\n" in chunk.text.strip() else ""
        first = split_sentences(body)[0] if body else ""
        names[key] = clean_display_name(title)
        result.entities.append(ExtractedEntity(names[key], "UNKNOWN", first[:MAX_SUBJECT_DESCRIPTION]))
    result.subject_entities = subject_names(key, names)
    return result


class LLMExtractor:
    """Extractor that asks a language model for MiniRAG's entity/relationship records.

    Malformed replies never raise (bad records are counted); a chunk whose replies hold no
    readable record is extracted by ``fallback`` (the offline extractor by default in an
    index), with a warning, and counted in ``fallback_chunks``. An :class:`LLMError`
    from the model propagates. With ``cache`` every reply is stored durably, so a
    rerun after a crash asks the model only for what is missing.
    """

    def __init__(
        self,
        llm: LLMBackend,
        entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
        max_gleaning: int = 1,
        max_concurrency: int = 4,
        cache: LLMCallCache | None = None,
        fallback: Extractor | None = None,
    ) -> None:
        self.name = f"llm:{llm.name}:glean{max_gleaning}"
        self.fallback = fallback
        self.fallback_chunks = 0
        self.llm: LLMBackend = CachedLLM(llm, cache) if cache is not None else llm
        self.entity_types = list(entity_types)
        self.max_gleaning = max(0, int(max_gleaning))
        self.max_concurrency = max(1, int(max_concurrency))

    @property
    def identity(self) -> str:
        """The extraction cache's key: the model, the prompts (with the entity types), the
        gleaning rounds and the reply parser's code and constants."""
        prompts = [build_extraction_prompt("{input_text}", self.entity_types), GLEAN_CONTINUE, GLEAN_IF_LOOP]
        fallback = getattr(self.fallback, "identity", getattr(self.fallback, "name", ""))
        parts = [self.llm.name, prompts, module_digest(record_parser), module_digest(subjects), fallback]
        return f"{self.name}:{digest(parts)}"

    def __repr__(self) -> str:
        return f"LLMExtractor(name={self.name!r})"

    async def _extract_one(self, chunk: Chunk) -> ExtractionResult:
        """First pass plus gleaning rounds for one chunk (LightRAG's loop), then its subject."""
        history = build_extraction_prompt(chunk.text, self.entity_types)
        reply = await self.llm.acomplete(history)
        results = [parse_extraction(reply)]
        for round_no in range(self.max_gleaning):
            history = f"{history}{reply}\n\n{GLEAN_CONTINUE}"
            reply = await self.llm.acomplete(history)
            results.append(parse_extraction(reply))
            if round_no == self.max_gleaning - 1:
                break
            answer = await self.llm.acomplete(f"{history}{reply}\n\n{GLEAN_IF_LOOP}")
            if not answer.strip().strip("\"'*").lower().startswith("yes"):
                break
        merged = merge_results(results)
        if merged.entities or merged.relations or self.fallback is None:
            return add_subject(merged, chunk)
        return await self._fall_back(chunk, merged.unparsed_records, len(reply))

    async def _fall_back(self, chunk: Chunk, unparsed: int, reply_chars: int) -> ExtractionResult:
        """The fallback extractor's result for a chunk the model gave no readable record for."""
        assert self.fallback is not None
        self.fallback_chunks += 1
        logger.warning("%s: no readable record in the model's reply for chunk %s (%d unparsed record(s), "
                       "%d characters); extracted it with %s instead", self.name, chunk.id, unparsed,
                       reply_chars, self.fallback.name)
        result = (await self.fallback.aextract([chunk]))[0]
        result.unparsed_records += unparsed
        return result

    async def aextract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]:
        """Extract all chunks concurrently (at most ``max_concurrency`` at a time)."""
        semaphore = asyncio.Semaphore(self.max_concurrency)
        bar = tqdm(total=len(chunks), desc="extracting", unit="chunk", disable=not show_progress)

        async def run(chunk: Chunk) -> ExtractionResult:
            async with semaphore:
                result = await self._extract_one(chunk)
            bar.update(1)
            return result

        tasks = [asyncio.ensure_future(run(c)) for c in chunks]
        try:
            results = list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            bar.close()
        self._log_totals(results)
        return results

    def extract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]:
        """Sync :meth:`aextract`; works inside a running event loop too (worker thread)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aextract(chunks, show_progress=show_progress))
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # the caller's context: its token meters
            run = contextvars.copy_context().run
            return pool.submit(run, asyncio.run, self.aextract(chunks, show_progress=show_progress)).result()

    def _log_totals(self, results: Sequence[ExtractionResult]) -> None:
        n_ent = sum(len(r.entities) for r in results)
        n_rel = sum(len(r.relations) for r in results)
        bad = sum(r.unparsed_records for r in results)
        logger.info("%s: %d chunk(s) -> %d entities, %d relations", self.name, len(results), n_ent, n_rel)
        if bad:
            logger.warning("%s: %d record(s) could not be parsed across %d chunk(s)", self.name, bad, len(results))
