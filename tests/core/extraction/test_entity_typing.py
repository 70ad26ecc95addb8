"""Entity typing: rules, zero-shot similarity, and answer types for questions."""

from __future__ import annotations

import pytest

from minirag_core.extraction.entity_typing import (
    TYPE_POOL, EntityTyper, answer_types_for_query, is_date_time, rule_answer_types, rule_type,
)


@pytest.fixture(scope="module")
def embedder():
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="module")
def typer(embedder):
    return EntityTyper(embedder, known_persons=["Wolfgang Schulz", "Li Hua"])


def test_type_pool_has_the_core_types():
    for t in ("PERSON", "LOCATION", "ORGANIZATION", "EVENT", "DATE AND TIME", "PRODUCT", "FOOD",
              "BEVERAGE", "ACTIVITY", "CONCEPT", "WORK OF ART"):
        assert TYPE_POOL[t]


@pytest.mark.parametrize("name", ["this Sunday", "Saturday afternoon", "March 5th", "3 PM", "8:30",
                                  "20260108", "20260108_11:00", "April 15 to 17", "Sundays"])
def test_date_time_rule(name):
    assert is_date_time(name)
    assert rule_type(name) == "DATE AND TIME"


@pytest.mark.parametrize("name,expected", [
    ("Baker Street", "LOCATION"), ("Central Park", "LOCATION"), ("Blue Bottle Cafe", "LOCATION"),
    ("Mr. Smith", "PERSON"), ("Coach Carter", "PERSON"), ("Jolly Band", "ORGANIZATION"),
    ("Acme Inc", "ORGANIZATION"), ("Christmas", "EVENT"), ("Lunar New Year", "EVENT"),
    ("Champions League", "EVENT"), ("Thai", "NATIONALITY"),
])
def test_suffix_and_lexicon_rules(name, expected):
    assert rule_type(name) == expected


def test_no_rule_for_plain_words():
    assert rule_type("Barcelona") is None
    assert rule_type("green curry") is None
    assert rule_type("indie games") is None  # org suffixes need a proper noun


def test_known_persons_and_rules_in_type_of(typer):
    assert typer.type_of(["WolfgangSchulz".replace("gS", "g S"), "li hua", "3 PM", "Baker Street"]) == [
        "PERSON", "PERSON", "DATE AND TIME", "LOCATION"]


def test_zero_shot_clear_cases(typer):
    names = ["green curry", "sourdough loaf", "coffee", "orange juice", "Barcelona", "guitar",
             "bench press", "Hotel California song"]
    got = dict(zip(names, typer.type_of(names)))
    assert got["green curry"] == "FOOD"
    assert got["sourdough loaf"] == "FOOD"
    assert got["coffee"] == "BEVERAGE"
    assert got["orange juice"] == "BEVERAGE"
    assert got["Barcelona"] == "LOCATION"
    assert got["guitar"] == "PRODUCT"
    assert got["bench press"] == "ACTIVITY"
    assert got["Hotel California song"] == "WORK OF ART"


def test_zero_shot_cache_and_context(typer):
    first = typer.type_of(["pad thai"])
    assert first == typer.type_of(["PAD THAI"])  # cached per normalised name
    assert "PAD THAI" in typer._cache
    # a context snippet is accepted and never yields a rule-only type
    (t,) = typer.type_of(["spring rolls"], ["Thinking of trying their pad thai and some spring rolls."])
    assert t in TYPE_POOL and t != "NATIONALITY"


@pytest.mark.parametrize("question,first", [
    ("When was the first time Li Hua had dinner with Wolfgang this year?", "DATE AND TIME"),
    ("What time is the power outage in the neighborhood?", "DATE AND TIME"),
    ("Where does Li Hua meet Wolfgang for lunch?", "LOCATION"),
    ("Who invites Li Hua to join the community bake sale?", "PERSON"),
    ("What song does Li Hua suggest for the jam session on 20260405?", "WORK OF ART"),
    ("What is the name of the Italian restaurant where Wolfgang and Li Hua are having dinner?", "LOCATION"),
    ("What food did Wolfgang order at the Thai spot?", "FOOD"),
])
def test_question_word_rules(question, first):
    assert rule_answer_types(question)[0] == first


def test_answer_types_fill_to_three(embedder):
    types = answer_types_for_query("Who invites Li Hua to join the community bake sale?", embedder)
    assert types[0] == "PERSON" and len(types) == 3 and len(set(types)) == 3
    assert all(t in TYPE_POOL for t in types)
    restaurant = answer_types_for_query("Which restaurant did they pick?", embedder)
    assert restaurant[:2] == ["LOCATION", "ORGANIZATION"]
    # no rule fires: zero-shot alone
    zs = answer_types_for_query("What drink goes well with spicy noodles?", embedder)
    assert zs[0] == "BEVERAGE" and len(zs) == 3
