"""Answer types a question's words imply ("who" -> PERSON, "when" -> DATE AND TIME, "which
film" -> WORK OF ART), kept only where the graph holds entities of that type: a type the graph
lacks has no candidate to offer, and a question that implies none gets none."""

from __future__ import annotations

import re
from typing import Iterable

from minirag_core.extraction.entity_typing import (
    ACTIVITY, BEVERAGE, DATE_TIME, EVENT, FOOD, LOCATION, ORGANIZATION, PERSON, PRODUCT, WORK_OF_ART,
)
from minirag_core.types import is_known_type

_Q_RULES: list[tuple[re.Pattern[str], list[str]]] = [
    (re.compile(r"\b(?:which|what) (?:restaurant|restaurants|cafe|café|bar|shop|store|hotel)\b"),
     [LOCATION, ORGANIZATION]),
    (re.compile(r"\b(?:which|what) (?:song|songs|album|albums|book|books|novel|movie|movies|film|films|"
                r"tv show|series|video game|painting|poem|title|track)\b"), [WORK_OF_ART]),
    (re.compile(r"\b(?:which|what) (?:band|team|club|company|companies|brand|organization|organisation|school|"
                r"university|party|agency|publisher|label)\b"), [ORGANIZATION]),
    (re.compile(r"\b(?:which|what) (?:place|city|cities|country|countries|town|venue|location|park|street|"
                r"region|state|river|island)\b"), [LOCATION]),
    (re.compile(r"\b(?:which|what) (?:event|events|party|festival|celebration|holiday|match|concert|war|battle|"
                r"election)\b"), [EVENT]),
    (re.compile(r"\b(?:which|what) (?:drink|drinks|beverage|beverages)\b"), [BEVERAGE]),
    (re.compile(r"\b(?:which|what) (?:food|foods|dish|dishes|meal|meals|snack|snacks|dessert|cuisine)\b"),
     [FOOD]),
    (re.compile(r"\b(?:which|what) (?:sport|sports|exercise|exercises|activity|activities|hobby|hobbies)\b"),
     [ACTIVITY]),
    (re.compile(r"\b(?:which|what) (?:product|device|gadget|instrument|vehicle|car|tool|gift)\b"), [PRODUCT]),
    (re.compile(r"\b(?:which|what) (?:person|people|friend|member|player|actor|actress|singer|author|writer|"
                r"director|politician|character)\b"), [PERSON]),
    (re.compile(r"^\s*when\b|\bwhen (?:did|does|do|is|was|will|are|were)\b|\bwhat (?:time|date|day|days|"
                r"month|year|hour)\b|\bwhich (?:day|days|date|month|time|year)\b|\bhow (?:long|often)\b|"
                r"\btime interval\b"), [DATE_TIME]),
    (re.compile(r"\bwhere\b"), [LOCATION]),
    (re.compile(r"\b(?:who|whom|whose)\b"), [PERSON]),
]


def rule_answer_types(query: str) -> list[str]:
    """Answer types implied by question words, earliest cue first, without duplicates."""
    q = query.lower()
    found: list[tuple[int, str]] = []
    for pattern, types in _Q_RULES:
        m = pattern.search(q)
        if m:
            found.extend((m.start(), t) for t in types)
    found.sort(key=lambda x: x[0])  # the wh-word usually comes first
    return list(dict.fromkeys(t for _, t in found))


def held_types(types: Iterable[str], pool_types: Iterable[str]) -> list[str]:
    """``types`` the graph holds, spelled as the pool spells them, in order, without duplicates;
    the unknown type never counts as held."""
    pool = {t.strip().upper(): t for t in pool_types if is_known_type(t)}
    return list(dict.fromkeys(pool[t.strip().upper()] for t in types if t.strip().upper() in pool))


__all__ = ["held_types", "rule_answer_types"]
