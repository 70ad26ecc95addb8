"""A model reply that gives nothing usable degrades to the offline path for that chunk or question,
and says so: extraction (the offline extractor), query mapping (the offline mapper) and answers
(the context with a note)."""

from __future__ import annotations

import logging

from minirag_core.extraction.llm_extractor import LLMExtractor
from minirag_core.llm.answering import EMPTY_REPLY_NOTE, answer_from
from minirag_core.llm.callable_backend import CallableBackend
from minirag_core.retrieval.query.model_mapping import LLMQueryMapper
from minirag_core.types import Chunk, ExtractedEntity, ExtractionResult, QueryMapping, RetrievalResult, ScoredChunk

RECORDS = '("entity"<|>"Wolfgang"<|>"person"<|>"A cook.")<|COMPLETE|>'


class OfflineStandIn:
    """An extractor and mapper that always find one thing, and count their calls."""

    name = "offline-stand-in"

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.queries: list[str] = []

    def extract(self, chunks, *, show_progress=False):
        self.chunks += [c.id for c in chunks]
        return [ExtractionResult(entities=[ExtractedEntity("Offline Name", "UNKNOWN", "")]) for _ in chunks]

    async def aextract(self, chunks, *, show_progress=False):
        return self.extract(chunks)

    def map_query(self, query, type_pool):
        self.queries.append(query)
        return QueryMapping(entities=["Offline Entity"], answer_types=["PERSON"], source="offline")

    async def amap_query(self, query, type_pool):
        return self.map_query(query, type_pool)


def test_a_chunk_without_readable_records_is_extracted_offline(caplog):
    def model(prompt: str) -> str:
        return RECORDS if "Wolfgang cooks" in prompt else "I cannot help with that. (entity|broken"

    offline = OfflineStandIn()
    extractor = LLMExtractor(CallableBackend("m", model), max_gleaning=0, fallback=offline)
    chunks = [Chunk("c1", "d1", 0, "Wolfgang cooks soup.", 4), Chunk("c2", "d2", 0, "Nothing here.", 3)]
    with caplog.at_level(logging.WARNING, logger="minirag_core"):
        first, second = extractor.extract(chunks)
    assert [e.name for e in first.entities] == ["Wolfgang"]
    assert [e.name for e in second.entities] == ["Offline Name"] and offline.chunks == ["c2"]
    assert extractor.fallback_chunks == 1 and "chunk c2" in caplog.text and "offline-stand-in" in caplog.text
    # the fallback is part of what the extraction cache is keyed by
    assert extractor.identity != LLMExtractor(CallableBackend("m", model), max_gleaning=0).identity


def test_an_unreadable_mapping_reply_uses_the_fallback_mapper():
    offline = OfflineStandIn()
    replies = iter(["", '{"answer_type_keywords": ["PERSON"], "entities_from_query": ["Wolfgang"]}'])
    mapper = LLMQueryMapper(CallableBackend("m", lambda prompt: next(replies)), fallback=offline)
    fell_back = mapper.map_query("Who cooks?", {"PERSON": ["Wolfgang"]})
    assert fell_back.source == "fallback" and fell_back.entities == ["Offline Entity"] and offline.queries == ["Who cooks?"]
    mapped = mapper.map_query("Who cooks soup?", {"PERSON": ["Wolfgang"]})
    assert mapped.source == "model" and mapped.entities == ["Wolfgang"] and len(offline.queries) == 1


def test_an_empty_answer_returns_the_context_with_a_note():
    chunk = ScoredChunk(chunk_id="c1", doc_id="d1", text="Wolfgang cooks soup.", score=1.0, n_tokens=4)
    result = RetrievalResult(query="Who cooks?", mode="naive", chunks=[chunk])
    answer = answer_from(CallableBackend("m", lambda prompt: "  \n"), "Who cooks?", result)
    assert not answer.generated and answer.text.startswith(EMPTY_REPLY_NOTE)
    assert "Wolfgang cooks soup." in answer.text and result.notes[-1] == EMPTY_REPLY_NOTE
    assert answer_from(CallableBackend("m", lambda prompt: "Wolfgang."), "Who cooks?", result).generated
