"""Tolerant parser of the query_to_keyword reply (query entities and answer types); never raises."""

from __future__ import annotations

import logging
import re
from typing import Any

import json_repair

from minirag_core.types import QueryMapping
from minirag_core.extraction.reply_text import FENCE, as_str, clean_field, to_text

logger = logging.getLogger("minirag_core")

_MAX_MAPPING_CHARS = 4_000  # a query_to_keyword reply is short; only its head is read

_QUESTION_WORDS = {
    "what", "who", "whom", "whose", "when", "where", "why", "how", "which", "is", "are", "was", "were",
    "do", "does", "did", "can", "could", "should", "would", "will", "the", "a", "an", "in", "on", "of",
    "i", "tell", "list", "name", "give", "please", "and", "or", "to", "for", "with", "about", "at", "by",
    "from", "has", "have", "had", "be", "it", "its", "this", "that", "these", "those", "there", "me", "my",
    "you", "your", "we", "our", "they", "their", "he", "she", "his", "her", "them", "any", "all", "some",
    "many", "much", "most", "more", "not", "if", "than", "then", "so", "as", "into", "during", "after",
    "before", "between", "mentioned", "remind", "everyone",
}
_CAP_PHRASE = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|the|de|van|von|and|&)?\s*[A-Z0-9][\w'’.-]*)*")
_QUOTED = re.compile(r"[\"“']([^\"”']{2,80})[\"”']")
_WORD = re.compile(r"[A-Za-z][\w'-]{2,}")


def _strip_possessive(text: str) -> str:
    return re.sub(r"['’]s?$", "", text.strip(" .,;:?!")).strip()


def fallback_query_entities(query: str) -> list[str]:
    """The query's quoted phrases and capitalised phrases, else its content words."""
    found: list[str] = [q.strip() for q in _QUOTED.findall(query)]
    for match in _CAP_PHRASE.finditer(query):
        words = match.group(0).split()
        while words and words[0].lower() in _QUESTION_WORDS:
            words.pop(0)
        phrase = _strip_possessive(" ".join(words))
        if phrase and phrase.lower() not in _QUESTION_WORDS:
            found.append(phrase)
    if not found:
        found = [w for w in _WORD.findall(query) if w.lower() not in _QUESTION_WORDS]
    seen: set[str] = set()
    return [f for f in found if not (f.lower() in seen or seen.add(f.lower()))]


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,;\n]", value)]
    if not isinstance(value, (list, tuple)):
        return []
    out = [clean_field(as_str(v)) for v in value]
    return [v for v in out if v]


def _mapping_dict(text: str) -> dict[str, Any] | None:
    """The reply's JSON object, repaired; braces added if the model left them out."""
    candidates = [text]
    if "{" not in text:
        candidates.append("{" + text + "}")
    else:
        candidates.append(text[text.find("{") :])
    for candidate in candidates:
        try:
            data = json_repair.loads(candidate)
        except Exception:  # noqa: BLE001
            continue
        if isinstance(data, list):
            data = next((d for d in data if isinstance(d, dict)), None)
        if isinstance(data, dict) and any(
            k in data for k in ("answer_type_keywords", "entities_from_query", "answer_types", "entities")
        ):
            return data
    return None


def parse_query_mapping(text: str | bytes, query: str) -> QueryMapping:
    """Parse the query_to_keyword reply; fall back to the query's own phrases."""
    try:
        raw = FENCE.sub("", to_text(text)[:_MAX_MAPPING_CHARS]).strip()
        data = _mapping_dict(raw) if raw else None
        if data is not None:
            types = _str_list(data.get("answer_type_keywords", data.get("answer_types", [])))[:3]
            entities = _str_list(data.get("entities_from_query", data.get("entities", [])))
            if types or entities:
                return QueryMapping(entities=entities or fallback_query_entities(query), answer_types=types)
        logger.warning("query mapping reply could not be parsed, using fallback: %r", raw[:200])
    except Exception:  # noqa: BLE001 - the contract is: never raise
        logger.warning("query mapping reply could not be parsed", exc_info=True)
    try:
        entities = fallback_query_entities(to_text(query))
    except Exception:  # noqa: BLE001
        entities = []
    return QueryMapping(entities=entities, answer_types=[], source="fallback")
