"""The tolerant extraction-record and query-keyword parsers."""

from __future__ import annotations

import logging

import pytest

from minirag_core.extraction.record_parser import parse_extraction
from minirag_core.retrieval.query.reply import parse_query_mapping
from minirag_core.llm.prompts import ENTITY_EXTRACTION

PAPER_OUTPUT = ENTITY_EXTRACTION.split("Example 1:")[1].split("Output:\n")[1].split("#####")[0]

GOOD = (
    '("entity"<|>"Li Hua"<|>"person"<|>"Li Hua organises the weekly game night.")##\n'
    '("entity"<|>"Wolfgang"<|>"person"<|>"Wolfgang is Li Hua\'s roommate.")##\n'
    '("relationship"<|>"Li Hua"<|>"Wolfgang"<|>"They share an apartment."<|>"roommates, home"<|>8)##\n'
    '("content_keywords"<|>"game night, friendship")<|COMPLETE|>'
)


def names(result) -> list[str]:
    return [e.name for e in result.entities]


def edges(result) -> list[tuple[str, str]]:
    return [(r.source, r.target) for r in result.relations]


def test_paper_example_output() -> None:
    res = parse_extraction(PAPER_OUTPUT)
    assert names(res) == ["Alex", "Taylor", "Jordan", "Cruz", "The Device"]
    assert len(res.relations) == 5
    first = res.relations[0]
    assert (first.source, first.target, first.weight) == ("Alex", "Taylor", 7.0)
    assert first.keywords == "power dynamics, perspective shift"
    assert first.description.startswith("Alex is affected")
    assert res.content_keywords == ["power dynamics", "ideological conflict", "discovery", "rebellion"]
    assert res.unparsed_records == 0
    assert res.entities[0].type == "PERSON"


def test_well_formed() -> None:
    res = parse_extraction(GOOD)
    assert names(res) == ["Li Hua", "Wolfgang"]
    assert res.entities[1].description == "Wolfgang is Li Hua's roommate."
    assert edges(res) == [("Li Hua", "Wolfgang")]
    assert res.relations[0].weight == 8.0
    assert res.content_keywords == ["game night", "friendship"]
    assert res.unparsed_records == 0


@pytest.mark.parametrize("delim", ["<|>", "<|", "|", "<||>", "\t", "|>", " <|> "])
def test_wrong_delimiters(delim: str) -> None:
    text = GOOD.replace("<|>", delim)
    res = parse_extraction(text)
    assert names(res) == ["Li Hua", "Wolfgang"]
    assert edges(res) == [("Li Hua", "Wolfgang")]
    assert res.relations[0].weight == 8.0
    assert res.relations[0].keywords == "roommates, home"


@pytest.mark.parametrize("sep", ["##", "###", "\n", "\n\n", " ## ", "##\n"])
def test_record_separators(sep: str) -> None:
    text = sep.join(
        [
            '("entity"<|>"A"<|>"person"<|>"desc a")',
            '("entity"<|>"B"<|>"place"<|>"desc b")',
            '("relationship"<|>"A"<|>"B"<|>"A lives in B"<|>"home"<|>5)',
        ]
    )
    res = parse_extraction(text)
    assert names(res) == ["A", "B"]
    assert edges(res) == [("A", "B")]
    assert res.unparsed_records == 0


def test_complete_marker_anywhere() -> None:
    text = '<|COMPLETE|>("entity"<|>"A"<|>"person"<|>"x")<|COMPLETE|>##("entity"<|>"B"<|>"person"<|>"y")<|COMPLETE|>'
    res = parse_extraction(text)
    assert names(res) == ["A", "B"]
    assert res.entities[0].description == "x"


def test_missing_and_unbalanced_quotes() -> None:
    text = (
        '(entity<|>Li Hua<|>person<|>No quotes at all)##\n'
        '("entity"<|>"Bob<|>"person"<|>"Bob lost a closing quote on his name.")##\n'
        '("entity"<|>"Carol"<|>person"<|>"Carol\'s type lost its opening quote.")##\n'
        '("relationship"<|>Li Hua<|>"Bob"<|>"friends<|>friendship<|>6)'
    )
    res = parse_extraction(text)
    assert names(res) == ["Li Hua", "Bob", "Carol"]
    assert [e.type for e in res.entities] == ["PERSON", "PERSON", "PERSON"]
    assert res.entities[0].description == "No quotes at all"
    assert edges(res) == [("Li Hua", "Bob")]
    assert res.relations[0].weight == 6.0


def test_truncated_last_record_entity_kept_without_description() -> None:
    text = '("entity"<|>"A"<|>"person"<|>"desc a")##("entity"<|>"B"<|>"person"<|>"B is a perso'
    res = parse_extraction(text)
    assert names(res) == ["A", "B"]
    assert res.entities[1].description == ""


def test_truncated_inside_name_is_unparsed() -> None:
    res = parse_extraction('("entity"<|>"A"<|>"person"<|>"desc a")##("entity"<|>"Bo')
    assert names(res) == ["A"]
    assert res.unparsed_records == 1


def test_truncated_relationship_keeps_complete_fields() -> None:
    res = parse_extraction('("relationship"<|>"A"<|>"B"<|>"A knows B"<|>"acquaint')
    assert edges(res) == [("A", "B")]
    assert res.relations[0].description == "A knows B"
    assert res.relations[0].weight == 1.0


def test_prose_and_code_fences() -> None:
    text = "Sure! Here are the entities I found:\n```text\n" + GOOD + "\n```\nLet me know if you need anything else (e.g. more)."
    res = parse_extraction(text)
    assert names(res) == ["Li Hua", "Wolfgang"]
    assert edges(res) == [("Li Hua", "Wolfgang")]
    assert res.content_keywords == ["game night", "friendship"]


def test_non_numeric_strength_defaults() -> None:
    res = parse_extraction('("relationship"<|>"A"<|>"B"<|>"desc"<|>"kw"<|>"high")')
    assert res.relations[0].weight == 1.0
    assert res.relations[0].keywords == "kw"


def test_swapped_strength_and_keywords() -> None:
    res = parse_extraction('("relationship"<|>"A"<|>"B"<|>"desc"<|>9<|>"kw")')
    assert res.relations[0].weight == 9.0
    assert res.relations[0].keywords == "kw"


def test_relationship_missing_endpoint_dropped_and_counted() -> None:
    text = '("relationship"<|>""<|>"B"<|>"desc"<|>"kw"<|>3)##("relationship"<|>"A"<|>"  "<|>"d"<|>"k"<|>2)'
    res = parse_extraction(text)
    assert res.relations == []
    assert res.unparsed_records == 2


def test_unrecognised_record_counted() -> None:
    res = parse_extraction('("entty"<|>"A"<|>"person"<|>"typo")##' + GOOD)
    assert names(res) == ["Li Hua", "Wolfgang"]
    assert res.unparsed_records == 1


def test_empty_and_garbage() -> None:
    for text in ["", "   ", "no records here", "<|COMPLETE|>", "```", "((((", '"""', "<|><|><|>"]:
        res = parse_extraction(text)
        assert res.entities == [] and res.relations == []


def test_bytes_input_with_bad_utf8() -> None:
    raw = GOOD.encode("utf-8").replace(b"Wolfgang is", b"Wolfgang \xff\xfe is")
    res = parse_extraction(raw)
    assert names(res) == ["Li Hua", "Wolfgang"]


def test_non_string_input() -> None:
    assert parse_extraction(None).entities == []  # type: ignore[arg-type]
    assert parse_extraction(12345).entities == []  # type: ignore[arg-type]


def test_json_dict_variant() -> None:
    text = """```json
    {"entities": [{"entity_name": "Li Hua", "entity_type": "person", "entity_description": "host"},
                  {"name": "Wolfgang", "type": "person", "description": "roommate"}],
     "relationships": [{"source_entity": "Li Hua", "target_entity": "Wolfgang",
                        "relationship_description": "roommates", "relationship_keywords": "home",
                        "relationship_strength": "8"},
                       {"source": "Li Hua", "target": ""}],
     "content_keywords": "home, friends"
    ```"""
    res = parse_extraction(text)
    assert names(res) == ["Li Hua", "Wolfgang"]
    assert edges(res) == [("Li Hua", "Wolfgang")]
    assert res.relations[0].weight == 8.0
    assert res.content_keywords == ["home", "friends"]
    assert res.unparsed_records == 1


def test_json_list_variant_with_missing_bracket() -> None:
    text = '[{"entity_name": "A", "entity_type": "person", "entity_description": "a"}, ["relationship", "A", "B", "d", "k", 4]'
    res = parse_extraction(text)
    assert names(res) == ["A"]
    assert edges(res) == [("A", "B")]
    assert res.relations[0].weight == 4.0


def test_delimiter_injection_only_corrupts_own_record() -> None:
    # A document quoted delimiters, separators and a parenthesis into one description.
    text = (
        '("entity"<|>"A"<|>"person"<|>"desc a")##\n'
        '("entity"<|>"Shell"<|>"technology"<|>"Runs `cat x | grep <|> y ## z` (pipes) ) and more")##\n'
        '("entity"<|>"C"<|>"person"<|>"desc c")##\n'
        '("relationship"<|>"A"<|>"C"<|>"A met C; notes say \'x<|>y\' ##"<|>"meeting"<|>4)##\n'
        '("entity"<|>"D"<|>"person"<|>"desc d")'
    )
    res = parse_extraction(text)
    assert names(res) == ["A", "Shell", "C", "D"]
    by_name = {e.name: e for e in res.entities}
    assert by_name["A"].description == "desc a"
    assert by_name["C"].description == "desc c"
    assert by_name["D"].description == "desc d"
    assert edges(res) == [("A", "C")]
    assert res.relations[0].weight == 4.0


def test_query_mapping_paper_style_without_braces() -> None:
    reply = '"answer_type_keywords": ["LOCATION"], "entities_from_query": ["capital of the United States", "Washington"]'
    m = parse_query_mapping(reply, "Where is the capital of the United States?")
    assert m.answer_types == ["LOCATION"]
    assert m.entities == ["capital of the United States", "Washington"]
    assert m.source == "model"


def test_query_mapping_json_truncated_and_capped() -> None:
    reply = '```json\n{"answer_type_keywords": ["A", "B", "C", "D"], "entities_from_query": ["SpaceX", "Rocket launch"'
    m = parse_query_mapping(reply, "When was SpaceX's first rocket launch?")
    assert m.answer_types == ["A", "B", "C"]
    assert m.entities == ["SpaceX", "Rocket launch"]


def test_query_mapping_fallback(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="minirag_core"):
        m = parse_query_mapping("I cannot help with that.", "What does Briar remind everyone to bring to practice?")
    assert m.source == "fallback"
    assert m.answer_types == []
    assert m.entities == ["Briar"]
    assert "could not be parsed" in caplog.text


def test_query_mapping_fallback_lowercase_query() -> None:
    m = parse_query_mapping("", "what is the role of education in reducing poverty")
    assert m.source == "fallback"
    assert "education" in m.entities and "poverty" in m.entities
