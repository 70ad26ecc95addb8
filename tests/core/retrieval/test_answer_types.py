"""Answer types of a question: its question words, kept only where the graph holds the type."""

from __future__ import annotations

import pytest

from minirag_core.retrieval.query.answer_types import held_types, rule_answer_types
from minirag_core.retrieval.query.offline_mapping import OfflineQueryMapper


@pytest.mark.parametrize("question,first", [
    ("When was the first time Li Hua had dinner with Wolfgang this year?", "DATE AND TIME"),
    ("What time is the power outage in the neighborhood?", "DATE AND TIME"),
    ("Where does Li Hua meet Wolfgang for lunch?", "LOCATION"),
    ("Who invites Li Hua to join the community bake sale?", "PERSON"),
    ("What song does Li Hua suggest for the jam session on 20260405?", "WORK OF ART"),
    ("What is the name of the Italian restaurant where Wolfgang and Li Hua are having dinner?", "LOCATION"),
    ("What food did Wolfgang order at the Thai spot?", "FOOD"),
    ("Which film did the director of Blue Harbor make after moving to Lisbon?", "WORK OF ART"),
])
def test_question_word_rules(question, first):
    assert rule_answer_types(question)[0] == first


@pytest.mark.parametrize("question", ["How does streaming a large response work?",
                                      "Explain the difference between the two settings."])
def test_no_type_when_no_question_word_implies_one(question):
    assert rule_answer_types(question) == []


def test_held_types_keep_the_pool_spelling_and_never_the_unknown_type():
    pool = ["Person", "DATE AND TIME", "UNKNOWN", ""]
    assert held_types(["PERSON", "LOCATION", "date and time", "PERSON"], pool) == ["Person", "DATE AND TIME"]
    assert held_types(["UNKNOWN", ""], pool) == []


@pytest.fixture(scope="module")
def mapper(embedder):
    return OfflineQueryMapper(embedder)


def test_answer_types_come_only_from_the_pool(mapper):
    question = "Which film won the award in 1998, and who directed it?"
    pool = {"PERSON": ["Jane Doe"], "WORK OF ART": ["Blue Harbor"], "UNKNOWN": ["x"]}
    assert mapper.map_query(question, pool).answer_types == ["WORK OF ART", "PERSON"]
    assert mapper.map_query(question, {"LOCATION": ["Paris"], "UNKNOWN": ["x"]}).answer_types == []
    assert mapper.map_query(question, {}).answer_types == []  # an empty graph holds no type


def test_a_question_implying_no_held_type_gets_none(mapper):
    pool = {"EVENT": ["e"], "PRODUCT": ["p"], "WORK OF ART": ["w"], "CONCEPT": ["c"], "PERSON": ["q"]}
    assert mapper.map_query("How does streaming a large response work?", pool).answer_types == []


def test_technical_shapes_first_then_question_words(mapper):
    pool = {"CODE": ["BaseModel"], "ERROR": ["ValidationError"], "CONCEPT": ["validation"], "PERSON": ["x"]}
    types = mapper.map_query("Why does model_validate raise an error when who sets the field?", pool).answer_types
    assert types[:2] == ["ERROR", "CODE"] and "PERSON" in types and len(types) <= 3
