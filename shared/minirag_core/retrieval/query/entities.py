"""Entity names in a question, found with the offline extractor's span rules."""

from __future__ import annotations

import re

from minirag_core.graph.names import clean_display_name, normalize_entity_name
from minirag_core.extraction.formats import split_sentences
from minirag_core.extraction.spans import find_capitalised, find_dates, find_noun_phrases, find_quoted, masked
from minirag_core.extraction.wordlists import QUESTION_LEAD


#: an identifier as code writes it: ``model_dump_json()``, ``info.data``, ``extra_fields``
_CODE_TOKEN = re.compile(r"(?<![\w.@])@?((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)(\(\))?(?![\w(])")


def code_tokens(sentence: str) -> list[tuple[int, int, str]]:
    """Spans of identifiers written as code (a call ``()``, an inner underscore, a dotted name
    of parts of two or more characters): each is one name, never split into words."""
    out = []
    for m in _CODE_TOKEN.finditer(sentence):
        name = m.group(1)
        parts = name.split(".")
        dotted = len(parts) > 1 and all(len(p) >= 2 for p in parts)
        if m.group(2) or "_" in name.strip("_") or dotted:
            out.append((m.start(), m.end(), name))
    return out


def extract_query_entities(text: str, *, max_entities: int = 8) -> list[str]:
    """Entity names in a question, found with the extractor's span rules.

    Identifiers written as code (``model_dump_json()``), quoted titles, dates/times, capitalised runs (CamelCase names split: ``MariaGarcia`` ->
    ``Maria Garcia``) and multi-word noun phrases; single noun phrases only when no named span
    was found.
    """
    names: list[str] = []
    nps: list[str] = []
    singles: list[str] = []
    for sent in split_sentences(text.strip()) or [text]:
        code = code_tokens(sent)
        names.extend(n for _, _, n in code)
        sent = masked(sent, code)
        quoted = find_quoted(sent)
        dates = find_dates(sent)
        text_masked = masked(sent, [(s, e, n) for s, e, n in quoted + dates])
        for _, _, n in quoted:
            names.append(n)
        caps = find_capitalised(text_masked, split_all_camel=True)
        for sp in caps:
            if sp.at_start and len(sp.name.split()) == 1 and sp.name in QUESTION_LEAD:
                continue
            names.append(sp.name)
        names.extend(n for _, _, n in dates)
        masked2 = masked(text_masked, [(sp.start, sp.end, sp.name) for sp in caps])
        for phrase, n in find_noun_phrases(masked2, max_words=4):
            (nps if n > 1 else singles).append(phrase)
    out: list[str] = []
    seen: set[str] = set()
    for n in names + nps + ([] if names else singles):
        key = normalize_entity_name(n)
        if key and key not in seen:
            seen.add(key)
            out.append(clean_display_name(n))
    return out[:max_entities]



__all__ = ["extract_query_entities"]
