"""Property tests: the parsers never raise, and a good record survives any garbage."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minirag_core.extraction.record_parser import parse_extraction
from minirag_core.retrieval.query.reply import parse_query_mapping
from minirag_core.types import ExtractionResult, QueryMapping

PIECES = [
    '("entity"', '("relationship"', '("content_keywords"', "<|>", "<|", "|", "<||>", "\t", "##", "###",
    "\n", "<|COMPLETE|>", '"', "'", "(", ")", "{", "}", "[", "]", ":", ",", "```", "```json", "entity",
    "relationship", "7", "high", " ", "Alex", "Li Hua", "\\", '\\"', "\x00", "é", "😀",
]

REC_ENTITY = '("entity"<|>"{n}"<|>"person"<|>"{n} is a person.")'
REC_REL = '("relationship"<|>"{a}"<|>"{b}"<|>"{a} knows {b}."<|>"friends"<|>{w})'

names = st.from_regex(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?", fullmatch=True)
token_soup = st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=60).map("".join)


def _mutate(record: str, data: st.DataObject) -> str:
    """One of the defects small models produce."""
    kind = data.draw(st.sampled_from(["truncate", "delim", "quotes", "none"]))
    if kind == "truncate":
        return record[: data.draw(st.integers(0, len(record)))]
    if kind == "delim":
        return record.replace("<|>", data.draw(st.sampled_from(["<|", "|", "<||>", "\t", "|>", ","])))
    if kind == "quotes":
        i = data.draw(st.integers(0, max(0, record.count('"') - 1)))
        parts = record.split('"')
        return '"'.join(parts[: i + 1]) + "".join(parts[i + 1 :]) if len(parts) > i + 1 else record
    return record


@st.composite
def broken_outputs(draw: st.DrawFn) -> str | bytes:
    data = draw(st.data())
    # "huge" replies cost ~0.3 s each to parse; one in ~40 keeps the 10,000-reply run in minutes
    style = draw(st.sampled_from(["records", "json", "prose", "empty", "soup", "bytes"] * 7 + ["huge"]))
    if style == "records":
        recs = [
            _mutate(REC_ENTITY.format(n=draw(names)), data)
            if draw(st.booleans())
            else _mutate(REC_REL.format(a=draw(names), b=draw(names), w=draw(st.sampled_from(["7", "x", "", "1e9"]))), data)
            for _ in range(draw(st.integers(0, 6)))
        ]
        return draw(st.sampled_from(["##", "###", "\n", ""])).join(recs)
    if style == "json":
        obj = draw(
            st.recursive(
                st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                lambda kids: st.lists(kids, max_size=4)
                | st.dictionaries(st.sampled_from(["entities", "relationships", "entity_name", "source", "x"]), kids, max_size=4),
                max_leaves=20,
            )
        )
        text = json.dumps(obj)
        return text[: draw(st.integers(0, len(text)))]
    if style == "prose":
        return draw(st.text(max_size=300))
    if style == "empty":
        return draw(st.sampled_from(["", " ", "\n", "<|COMPLETE|>", "```\n```"]))
    if style == "soup":
        return draw(token_soup)
    if style == "bytes":
        return draw(st.binary(max_size=300))
    return draw(token_soup) * draw(st.integers(50, 300))


def _check_extraction(text: str | bytes) -> None:
    res = parse_extraction(text)
    assert isinstance(res, ExtractionResult)
    assert res.unparsed_records >= 0
    for e in res.entities:
        assert e.name.strip()
    for r in res.relations:
        assert r.source.strip() and r.target.strip()
        assert isinstance(r.weight, float)


def _check_embedded(before: str, after: str, name: str, other: str) -> None:
    text = before + "\n" + REC_ENTITY.format(n=name) + "##\n" + REC_REL.format(a=name, b=other, w=5) + "\n" + after
    res = parse_extraction(text)
    assert any(e.name == name and e.description == f"{name} is a person." for e in res.entities)
    assert any(r.source == name and r.target == other and r.weight == 5.0 for r in res.relations)


def _check_mapping(text: str | bytes, query: str) -> None:
    m = parse_query_mapping(text, query)
    assert isinstance(m, QueryMapping)
    assert len(m.answer_types) <= 3
    assert all(isinstance(x, str) for x in m.entities + m.answer_types)


FAST = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
BIG = settings(max_examples=10000, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(broken_outputs())
def test_extraction_never_raises_fast(text: str | bytes) -> None:
    _check_extraction(text)


@FAST
@given(token_soup | st.text(max_size=200), token_soup | st.text(max_size=200), names, names)
def test_good_record_survives_garbage_fast(before: str, after: str, name: str, other: str) -> None:
    _check_embedded(before, after, name, other)


@FAST
@given(broken_outputs(), st.text(max_size=100))
def test_query_mapping_never_raises_fast(text: str | bytes, query: str) -> None:
    _check_mapping(text, query)


@pytest.mark.slow
@BIG
@given(broken_outputs(), st.text(max_size=200))
def test_both_parsers_never_raise_big(text: str | bytes, query: str) -> None:
    """10,000 generated replies, each fed to the extraction and the query-mapping parser."""
    _check_extraction(text)
    _check_mapping(text, query)


@pytest.mark.slow
@BIG
@given(token_soup | st.text(max_size=400), token_soup | st.text(max_size=400), names, names)
def test_good_record_survives_garbage_big(before: str, after: str, name: str, other: str) -> None:
    _check_embedded(before, after, name, other)


# -- query mapping: a parseable reply is kept, whatever the model wraps around it ---------------

TYPES = st.sampled_from(["PERSON", "LOCATION", "EVENT", "ORGANIZATION", "DATE", "CONCEPT"])
# prose around the JSON (no braces: those would start another object); lone surrogates too,
# as text decoded with errors="surrogateescape" carries them
PROSE = st.text(alphabet=st.characters(blacklist_characters="{}[]"), max_size=80)


@st.composite
def wrapped_mappings(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    types = draw(st.lists(TYPES, min_size=1, max_size=3))
    entities = draw(st.lists(names, min_size=1, max_size=4))
    text = json.dumps({"answer_type_keywords": types, "entities_from_query": entities},
                      indent=draw(st.sampled_from([None, 2])))
    style = draw(st.sampled_from(["plain", "fence", "prose", "both", "single_quotes", "unclosed"]))
    if style == "fence":
        text = "```json\n" + text + "\n```"
    elif style == "prose":
        text = draw(PROSE) + "\n" + text
    elif style == "both":
        text = draw(PROSE) + "\n```json\n" + text + "\n```\n" + draw(PROSE)
    elif style == "single_quotes":
        text = text.replace('"', "'")
    elif style == "unclosed":  # cut off right before the closing brace
        text = text.rstrip().removesuffix("}")
    return text, types, entities


def _check_mapping_kept(reply: tuple[str, list[str], list[str]], query: str) -> None:
    text, types, entities = reply
    m = parse_query_mapping(text, query)
    assert m.answer_types == types[:3] and m.entities == entities, (text, m)
    # also as bytes (what a raw HTTP body would be)
    assert parse_query_mapping(text.encode("utf-8", errors="surrogatepass"), query).entities == entities


@FAST
@given(wrapped_mappings(), st.text(max_size=60))
def test_query_mapping_keeps_parseable_reply_fast(reply, query: str) -> None:
    _check_mapping_kept(reply, query)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(wrapped_mappings(), st.text(max_size=120))
def test_query_mapping_keeps_parseable_reply_big(reply, query: str) -> None:
    _check_mapping_kept(reply, query)
