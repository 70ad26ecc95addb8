"""OfflineQueryMapper on LiHuaWorld dev questions."""

from __future__ import annotations

from conftest import LIHUAWORLD

import asyncio
import json
from pathlib import Path

import pytest

from minirag_core.extraction.base import QueryMapper
from minirag_core.query_mapping_offline import OfflineQueryMapper, extract_query_entities

QA = LIHUAWORLD / "qa_dev.json"


@pytest.fixture(scope="module")
def mapper():
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    return OfflineQueryMapper(SentenceTransformerEmbedder())


@pytest.fixture(scope="module")
def questions() -> dict[int, str]:
    if not QA.exists():
        pytest.skip("qa_dev.json not available")
    return {q["id"]: q["question"] for q in json.loads(QA.read_text(encoding="utf-8"))}


def test_protocol(mapper):
    assert isinstance(mapper, QueryMapper)


def test_when_question(mapper, questions):
    q = questions[63]  # When was the first time Li Hua had dinner with Wolfgang this year?
    m = mapper.map_query(q, {})
    assert m.source == "offline"
    assert m.entities[:2] == ["Li Hua", "Wolfgang"]
    assert m.answer_types[0] == "DATE AND TIME" and len(m.answer_types) <= 3


def test_when_question_with_date(mapper, questions):
    m = mapper.map_query(questions[69], {})  # What does Li Hua report to Adam on January 6th?
    assert m.entities == ["Li Hua", "Adam", "January 6"]
    assert mapper.map_query(questions[114], {}).answer_types[0] == "DATE AND TIME"


def test_who_question(mapper, questions):
    m = mapper.map_query(questions[112], {})  # Who invites Li Hua to join the community bake sale?
    assert m.entities == ["Li Hua", "community bake sale"]
    assert m.answer_types[0] == "PERSON"


def test_where_question(mapper):
    m = mapper.map_query("Where do Li Hua and WolfgangSchulz meet for the photo exhibition?", {})
    assert m.entities == ["Li Hua", "Wolfgang Schulz", "photo exhibition"]
    assert m.answer_types[0] == "LOCATION"


def test_quoted_title_and_song_type(mapper, questions):
    m = mapper.map_query(questions[10], {})
    assert m.entities[:2] == ["Viva la Vida", "Wolfgang Schulz"]
    assert "this Sunday" in m.entities
    m = mapper.map_query(questions[125], {})  # What song does Li Hua suggest ... on 20260405?
    assert m.answer_types[0] == "WORK OF ART"
    assert "2026-04-05" in m.entities and "jam session" in m.entities


def test_noun_phrases_when_no_names(mapper, questions):
    m = mapper.map_query(questions[110], {})  # What time is the power outage in the neighborhood?
    assert m.entities == ["power outage", "neighborhood"]
    assert m.answer_types[0] == "DATE AND TIME"


def test_types_restricted_to_pool(mapper, questions):
    pool = {"PERSON": ["Li Hua"], "LOCATION": ["Barcelona"], "SONG": ["Hey Jude"]}
    m = mapper.map_query(questions[125], pool)
    assert m.answer_types[0] == "SONG"  # WORK OF ART mapped to the nearest pool type
    assert set(m.answer_types) <= set(pool)
    m = mapper.map_query(questions[63], {"PERSON": [], "DATE AND TIME": []})
    assert m.answer_types[0] == "DATE AND TIME" and set(m.answer_types) <= {"PERSON", "DATE AND TIME"}


def test_async(mapper, questions):
    m = asyncio.run(mapper.amap_query(questions[63], {}))
    assert m.answer_types[0] == "DATE AND TIME"


def test_all_dev_questions_map(mapper, questions):
    n_with_entities = 0
    for q in questions.values():
        ents = extract_query_entities(q)
        n_with_entities += bool(ents)
        assert all(e and e == e.strip() for e in ents)
    assert n_with_entities >= 0.95 * len(questions)
