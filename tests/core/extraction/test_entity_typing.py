"""Entity typing: rules, and zero-shot similarity only where the classifier is confident."""

from __future__ import annotations

import pytest

from minirag_core.extraction.entity_typing import TYPE_POOL, EntityTyper, is_date_time, rule_type


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
    ("Mr. Smith", "PERSON"), ("Jolly Band", "ORGANIZATION"),
    ("Acme Inc", "ORGANIZATION"), ("Christmas", "EVENT"), ("Lunar New Year", "EVENT"),
    ("Thai", "NATIONALITY"),
])
def test_suffix_and_lexicon_rules(name, expected):
    assert rule_type(name) == expected


def test_no_rule_for_plain_words():
    assert rule_type("Barcelona") is None
    assert rule_type("green curry") is None
    assert rule_type("indie games") is None  # org suffixes need a proper noun
    assert rule_type("progress bar") is None  # and so do place suffixes


def test_known_persons_and_rules_in_type_of(typer):
    assert typer.type_of(["WolfgangSchulz".replace("gS", "g S"), "li hua", "3 PM", "Baker Street"]) == [
        "PERSON", "PERSON", "DATE AND TIME", "LOCATION"]


def test_zero_shot_types_clear_cases(typer):
    names = ["coffee", "orange juice", "tomato soup", "smartphone", "swimming", "election", "university"]
    assert typer.type_of(names) == ["BEVERAGE", "BEVERAGE", "FOOD", "PRODUCT", "ACTIVITY", "EVENT", "ORGANIZATION"]


@pytest.mark.parametrize("name", ["signed cookie", "PERMANENT_SESSION_LIFETIME", "Flask-SQLAlchemy", "Werkzeug",
                                  "contractor says", "expectations upside", "jamming sessions", "choices"])
def test_zero_shot_abstains_when_unsure(typer, name):
    """A name the classifier cannot place with confidence gets no type (never a nearest guess)."""
    assert typer.type_of([name]) == [None]


def test_thresholds_decide(embedder):
    loose = EntityTyper(embedder, min_similarity=-1.0, margin=0.0)
    assert loose.type_of(["signed cookie"])[0] in TYPE_POOL  # the old nearest-type guess
    strict = EntityTyper(embedder, min_similarity=1.1)
    assert strict.type_of(["coffee"]) == [None]


def test_a_recogniser_type_stands_unless_the_classifier_prefers_another(typer):
    names = ["Linux", "Alphaville", "Paris", "Pydantic", "Baker Street"]
    cues = ["PERSON", "PERSON", "LOCATION", "NATIONALITY", "LOCATION"]
    assert typer.confirmed(names, cues) == [False, False, True, False, True]  # a rule confirms Baker Street


def test_zero_shot_scores_are_cached_per_name(typer):
    first = typer.type_of(["tomato soup"])
    assert first == typer.type_of(["TOMATO SOUP"])  # cached per normalised name
    assert "TOMATO SOUP" in typer._cache
    # a context snippet is accepted and never yields a rule-only type
    (t,) = typer.type_of(["spring rolls"], ["Thinking of trying some spring rolls for dinner."])
    assert t != "NATIONALITY"
