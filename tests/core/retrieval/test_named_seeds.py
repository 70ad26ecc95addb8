"""Every span of a question that names an entity node seeds it, whatever its length or case."""

from __future__ import annotations

from types import SimpleNamespace

from minirag_core.graph.names import normalize_entity_name
from minirag_core.retrieval.query.seeds import named_spans, with_named_entities
from minirag_core.types import QueryMapping

NODES = {normalize_entity_name(n) for n in ("FAVICON", "stream_with_context", "Static Files", "Flask")}
SOURCES = SimpleNamespace(graph=SimpleNamespace(entity=lambda eid: {"name": eid} if eid in NODES else None))


def _seeds(query: str) -> set[str]:
    mapping = with_named_entities(SOURCES, query, QueryMapping(entities=[], answer_types=[]))
    return {normalize_entity_name(e) for e in mapping.entities if normalize_entity_name(e) in NODES}


def test_a_one_word_query_in_lower_case_seeds_the_entity_it_names():
    assert _seeds("favicon") == {normalize_entity_name("FAVICON")}


def test_a_code_name_query_seeds_it():
    assert _seeds("stream_with_context") == {normalize_entity_name("stream_with_context")}


def test_a_question_seeds_every_entity_named_inside_it_longest_span_first():
    found = named_spans(SOURCES, "how do i serve static files and a favicon with flask?")
    assert set(found.values()) == {normalize_entity_name(n) for n in ("Static Files", "FAVICON", "Flask")}


def test_a_question_naming_nothing_in_the_graph_gets_no_seeds():
    mapping = QueryMapping(entities=["weather"], answer_types=[])
    assert with_named_entities(SOURCES, "what is the weather like today?", mapping) is mapping
