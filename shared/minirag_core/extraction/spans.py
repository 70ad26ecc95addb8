"""Rule-based span finders over one sentence: dates and times, quoted titles, runs of
capitalised words and key noun phrases. Offsets are relative to the sentence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from minirag_core.graph.names import clean_display_name
from minirag_core.extraction.temporal import canonical_timestamp, find_day_dates
from minirag_core.extraction.formats import split_camel_name
from minirag_core.extraction.wordlists import ADJ_STRIP, CONNECTORS, GENERIC_SINGLE, NP_TRIGGERS, STOP_CAPS, STOPWORDS

_CAMEL_NAME = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+|-[a-z]+)+$")
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?"
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
          r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)")
_ORD = r"\d{1,2}(?:st|nd|rd|th)?"
_AMPM = r"(?:[AaPp]\.?[Mm]\b\.?)"
_DATE_PATTERNS = re.compile(
    "|".join([
        rf"\b(?:(?:this|next|last|coming)\s+)?{_WEEKDAY}(?:\s+(?:morning|afternoon|evening|night))?\b",
        rf"\b{_MONTH}\.?\s+{_ORD}(?:\s*(?:-|–|to)\s*{_ORD})?(?:,?\s+(?:19|20)\d{{2}})?\b",
        rf"\b{_ORD}\s+of\s+{_MONTH}(?:,?\s+(?:19|20)\d{{2}})?\b",
        rf"\b(?:in|of|early|late|mid|since|until|during|by)\s+{_MONTH}\b",
        rf"\b\d{{1,2}}(?::\d{{2}})?\s?{_AMPM}(?:\s*(?:-|–|to)\s*\d{{1,2}}(?::\d{{2}})?\s?{_AMPM})?",
        r"\b\d{1,2}:\d{2}\b",
    ]),
)
_TIMESTAMP = re.compile(r"\b(?:19|20)\d{6}_\d{1,2}:\d{2}\b")  # a bare 8-digit number only as a timestamp
_DATE_LEAD = re.compile(r"^(?:in|of|early|late|mid|since|until|during|by|on|before|after|from)\s+", re.I)
_TIME_NORM = re.compile(r"(\d{1,2}(?::\d{2})?)\s?([AaPp])\.?[Mm]\.?")

_QUOTED = re.compile(r"[\"“]([^\"“”\n]{2,80}?)[\"”]")
_TOKEN = re.compile(r"[^\W_][\w'’\-]*")
_GREETING_BEFORE = re.compile(r"(?:\b(?:Hey|Hi|Hello|Dear|Thanks|Thank you|Bye|Cheers|Congrats)[,!]?\s+|,\s+)$")
_PLACE_BEFORE = re.compile(r"\b(?:at|near|visit|visited|visiting|trip to|went to|go to|going to|moved to|"
                           r"live in|lives in|living in|located in|head to|heading to)\s+(?:the\s+)?$",
                           re.I)
_WORD_LOWER = re.compile(r"^[^\W\d_A-Z][^\W\d_]*(?:-[^\W\d_]+)*$")


def _normalise_date(text: str) -> str:
    text = _DATE_LEAD.sub("", text.strip())
    text = re.sub(r"\s+", " ", text)
    text = _TIME_NORM.sub(lambda m: f"{m.group(1)} {m.group(2).upper()}M", text)
    first, _, rest = text.partition(" ")
    if first.lower() in ("this", "next", "last", "coming"):
        text = first.lower() + (" " + rest if rest else "")
    return text


def find_dates(sentence: str, *, day_first: bool | None = None) -> list[tuple[int, int, str]]:
    """(start, end, display name) of date/time expressions; a day is named canonically
    (``2026-01-06``, or ``January 6`` without a year) whatever its spelling, a timestamp as
    ``2026-01-06 13:00``."""
    out = [(m.start(), m.end(), canonical_timestamp(m.group(0)) or m.group(0)) for m in _TIMESTAMP.finditer(sentence)]
    for start, end, date in find_day_dates(masked(sentence, out), day_first=day_first):
        name = date.canonical() if date.last_day is None else _normalise_date(sentence[start:end])
        out.append((start, end, name))
    rest = masked(sentence, out)
    for m in _DATE_PATTERNS.finditer(rest):
        raw = m.group(0)
        if re.fullmatch(r"(?:in|of|early|late|mid|since|until|during|by)\s+May", raw, re.I):
            continue  # "May" alone is too often the verb
        out.append((m.start(), m.end(), _normalise_date(raw)))
    return sorted(out)


def find_quoted(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, title) of quoted titles starting with a capital letter or digit."""
    out = []
    for m in _QUOTED.finditer(sentence):
        inner = m.group(1).strip().rstrip(",.;:!?")
        if not inner or not (inner[0].isupper() or inner[0].isdigit()) or len(inner.split()) > 8:
            continue
        out.append((m.start(), m.end(), _strip_article(inner)))
    return out


def _strip_article(name: str) -> str:
    name = clean_display_name(name)
    if name.startswith("The ") and len(name) > 4:
        name = name[4:]
    return name


def _strip_possessive(tok: str) -> str:
    for suf in ("'s", "’s", "s'", "s’"):
        if tok.endswith(suf) and len(tok) > len(suf) + 1:
            return tok[: -len(suf)] + ("s" if suf.startswith("s") else "")
    return tok


def _is_cap(tok: str) -> bool:
    return tok[:1].isupper()


@dataclass
class Span:
    name: str
    start: int
    end: int
    kind: str  # "cap", "date", "quoted", "np", "speaker"
    at_start: bool = False
    vocative: bool = False
    place_cue: bool = False
    label: str | None = None  # type pool name given by the named-entity recogniser


def masked(sentence: str, spans: Iterable[tuple[int, int, str]]) -> str:
    chars = list(sentence)
    for s, e, _ in spans:
        for i in range(s, e):
            chars[i] = " "
        if s < len(chars):
            chars[s] = "|"  # break capitalised runs across a masked span
    return "".join(chars)


def find_capitalised(sentence: str, *, camel_ok: Iterable[str] = (), split_all_camel: bool = False) -> list[Span]:
    """Runs of capitalised words (connectors like ``of``/``the`` allowed inside)."""
    camel_ok = set(camel_ok)
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(sentence)]
    # first token position that starts the sentence (skipping opening quotes/emoji)
    first_pos = tokens[0][0] if tokens else 0
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        s, e, tok = tokens[i]
        if not _is_cap(tok):
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(tokens):
            gap = sentence[tokens[j - 1][1]:tokens[j][0]]
            if gap != " ":
                break
            t = tokens[j][2]
            if _is_cap(t):
                run.append(j)
                j += 1
                continue
            if t.lower() in CONNECTORS and j + 1 < len(tokens) and _is_cap(tokens[j + 1][2]) \
                    and sentence[tokens[j][1]:tokens[j + 1][0]] == " ":
                run.append(j)
                j += 1
                continue
            break
        i = j
        words = [tokens[k][2] for k in run]
        starts_sentence = tokens[run[0]][0] == first_pos
        # drop stop words at the edges
        while words and (words[0] in STOP_CAPS or words[0].lower() in CONNECTORS):
            words.pop(0)
            run.pop(0)
            starts_sentence = False if words else starts_sentence
        while words and (words[-1] in STOP_CAPS or words[-1].lower() in CONNECTORS):
            words.pop()
            run.pop()
        if starts_sentence and len(words) > 1 and re.search(r"(?:ly|ing|ed)$", words[0]):
            words.pop(0)
            run.pop(0)
            starts_sentence = False
            while words and words[0].lower() in CONNECTORS:
                words.pop(0)
                run.pop(0)
        if not words:
            continue
        # a stop word inside (e.g. "Jake I") splits the run: keep the part before it
        for k, w in enumerate(words):
            if w in STOP_CAPS and k > 0:
                words, run = words[:k], run[:k]
                while words and words[-1].lower() in CONNECTORS:
                    words.pop()
                    run.pop()
                break
        if not words:
            continue
        words[-1] = _strip_possessive(words[-1])
        if len(words) == 1 and (_CAMEL_NAME.match(words[0]) and (split_all_camel or words[0] in camel_ok)):
            words = split_camel_name(words[0]).split()
        name = " ".join(words)
        if name.startswith("The ") and len(words) > 1:
            name = name[4:]
        if len(name) < 2 or name.isdigit():
            continue
        s0, e0 = tokens[run[0]][0], tokens[run[-1]][1]
        before = sentence[:s0]
        vocative = bool(_GREETING_BEFORE.search(before)) and bool(re.match(r"^\s*[!?,.]", sentence[e0:] or "!"))
        place_cue = bool(_PLACE_BEFORE.search(before))
        spans.append(Span(name, s0, e0, "cap", at_start=starts_sentence, vocative=vocative,
                          place_cue=place_cue))
    return spans


def find_noun_phrases(sentence: str, *, max_words: int = 3) -> list[tuple[str, int]]:
    """(phrase, n_words) for lower-case content words right after a determiner/possessive."""
    out = []
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(sentence)]
    i = 0
    while i < len(tokens):
        if tokens[i][2].lower() not in NP_TRIGGERS:
            i += 1
            continue
        j = i + 1
        words: list[str] = []
        while j < len(tokens):
            gap = sentence[tokens[j - 1][1]:tokens[j][0]]
            w = tokens[j][2]
            if gap != " " or not _WORD_LOWER.match(w) or w in STOPWORDS or w.endswith("ly"):
                if w in ADJ_STRIP and not words and gap == " ":
                    j += 1  # leading adjective: skip
                    continue
                break
            words.append(w)
            j += 1
        while words and words[0] in ADJ_STRIP:
            words.pop(0)
        while words and (words[-1] in ADJ_STRIP or (words[-1].endswith("ed") and len(words[-1]) > 4)):
            words.pop()
        i = max(j, i + 1)
        if not words or len(words) > max_words + 1:
            continue
        if len(words) > max_words:
            words = words[-max_words:]
        if len(words) == 1 and (words[0] in GENERIC_SINGLE or len(words[0]) < 4):
            continue
        out.append((" ".join(words), len(words)))
    return out


__all__ = ["Span", "find_capitalised", "find_dates", "find_noun_phrases", "find_quoted", "masked"]
