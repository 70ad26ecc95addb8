"""One chunk's entities, mentioning sentences and relations, before typing.

Each sentence yields spans: named entities from spaCy (prose) or chat speakers (chat), quoted
titles, dates, capitalised runs and key noun phrases. Relations are dependency links between
entities of a sentence (weight :data:`LINK_WEIGHT`, the predicate as keywords), co-occurrence
in one sentence or chat message (weight 1, a weaker fallback) and a chat's conversation pairs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from minirag_core.extraction.entity_typing import EVENT, LOCATION, ORGANIZATION, rule_type
from minirag_core.graph.names import clean_display_name, normalize_entity_name
from minirag_core.extraction.temporal import canonical_date, canonical_timestamp
from minirag_core.types import Chunk
from minirag_core.extraction.formats import Message, split_sentences
from minirag_core.extraction.nlp import LABEL_TYPES, sentence_links
from minirag_core.extraction.spans import Span, find_capitalised, find_dates, find_noun_phrases, find_quoted, masked
from minirag_core.extraction.subjects import chunk_subject
from minirag_core.extraction import scripts
from minirag_core.extraction.code_names import span_name

MAX_DESCRIPTION = 300
MAX_SENTENCE = 220
LINK_WEIGHT = 2.0  # a dependency link counts twice a bare co-occurrence
_PRIORITY = {"page": 8, "heading": 7, "code": 6, "speaker": 5, "quoted": 4, "ner": 3, "date": 2, "cap": 1, "np": 0}


def trim(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class Relation:
    weight: float = 0.0
    direction: tuple[str, str] | None = None
    link_descs: list[str] = field(default_factory=list)
    other_descs: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)

    def add(self, weight: float, desc: str, keyword: str, *, first: bool = False) -> None:
        self.weight += weight
        target = self.link_descs if first else self.other_descs
        if desc and desc not in target:
            target.append(desc)
        if keyword and keyword not in self.keywords:
            self.keywords.append(keyword)


@dataclass
class ChunkEntities:
    names: dict[str, str] = field(default_factory=dict)  # key -> display
    kinds: dict[str, str] = field(default_factory=dict)  # key -> strongest kind
    ner_votes: dict[str, Counter] = field(default_factory=dict)  # key -> recogniser's types, counted
    sentences: dict[str, list[str]] = field(default_factory=dict)
    persons: set[str] = field(default_factory=set)
    places: set[str] = field(default_factory=set)
    relations: dict[tuple[str, str], Relation] = field(default_factory=dict)
    keywords: Counter = field(default_factory=Counter)
    subject: str | None = None  # key of the entity the chunk is about (its title or heading)
    subjects: list[str] = field(default_factory=list)  # keys of every subject (a Markdown chunk's heading path)
    structural_types: dict[str, str] = field(default_factory=dict)  # key -> type read from structure (code, page)

    def add(self, display: str, kind: str, sentence: str | None, speaker: str | None) -> str | None:
        display = clean_display_name(display)
        key = normalize_entity_name(display)
        if not key or len(key) < 2 or not scripts.fits_a_name(display):
            return None
        if key not in self.names or kind == "speaker":
            self.names[key] = display
        if _PRIORITY[kind] > _PRIORITY.get(self.kinds.get(key, ""), -1):
            self.kinds[key] = kind
        if sentence:
            line = trim(f"{speaker}: {sentence}" if speaker else sentence, MAX_SENTENCE)
            lst = self.sentences.setdefault(key, [])
            if line not in lst:
                lst.append(line)
        return key

    def relate(self, a: str, b: str, weight: float, desc: str, keyword: str, *, link: bool = False) -> None:
        rec = self.relations.setdefault((min(a, b), max(a, b)), Relation())
        if link and rec.direction is None:
            rec.direction = (a, b)
        rec.add(weight, desc, keyword, first=link)


@dataclass
class Sentence:
    """A sentence to read: its text, its speaker (chat) and its spaCy span (prose)."""

    text: str
    speaker: str | None = None
    parsed: Any = None
    spans: list[Span] = field(default_factory=list)
    code: list[tuple[int, int]] = field(default_factory=list)  # inline code spans (Markdown), offsets
    links: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, href) of links


def _clean_ner(text: str) -> str:
    name = clean_display_name(text)
    name = re.sub(r"^(?:the|The)\s+(?=\S)", "", name)
    return re.sub(r"(?:'s|’s)$", "", name)


def _ner_spans(sent: Any, day_first: bool | None = None) -> list[Span]:
    """Typed spans from spaCy's entities; an adjective of nationality that starts a longer
    proper name ("Polish-Russian War") is left to the capitalised-run rule."""
    out = []
    doc = sent.doc
    for ent in sent.ents:
        label_type = LABEL_TYPES.get(ent.label_)
        if label_type is None:
            continue
        if ent.label_ == "NORP" and ent.end < len(doc) and (doc[ent.end].pos_ == "PROPN" or doc[ent.end].text == "-"):
            continue
        name = _clean_ner(ent.text)
        if len(name) < 2 or name.isdigit() and ent.label_ not in ("DATE", "TIME"):
            continue
        if ent.label_ == "DATE":
            name = canonical_date(name, day_first=day_first) or name  # one name for a day, any spelling
        suffix_type = rule_type(name) if " " in name else None  # "... Studios", "... Street"
        if suffix_type in (ORGANIZATION, LOCATION, EVENT):
            label_type = suffix_type
        out.append(Span(name, ent.start_char - sent.start_char, ent.end_char - sent.start_char, "ner",
                        label=label_type))
    return out


def find_spans(s: Sentence, camel_ok: set[str], day_first: bool | None = None) -> list[Span]:
    """All spans of one sentence; later finders see the text with earlier spans masked (inline
    code first: it is a code name or nothing, never prose)."""
    code = [(a, b, s.text[a:b]) for a, b in s.code]
    named = [Span(n, a, b, "code") for a, b, raw in code for n in [span_name(raw)] if n]
    text = masked(s.text, code)
    quoted = find_quoted(text)
    ner = [sp for sp in (_ner_spans(s.parsed, day_first) if s.parsed is not None else [])
           if not any(q0 < sp.end and sp.start < q1 for q0, q1, _ in quoted + code)]
    text = masked(text, quoted + [(sp.start, sp.end, sp.name) for sp in ner])
    dates = find_dates(text, day_first=day_first)
    text = masked(text, dates)
    caps = find_capitalised(text, camel_ok=camel_ok)
    spans = named + [Span(n, a, b, "quoted") for a, b, n in quoted] + ner
    spans += [Span(n, a, b, "date") for a, b, n in dates]
    spans += caps
    for phrase, _n in find_noun_phrases(masked(text, [(sp.start, sp.end, sp.name) for sp in caps])):
        spans.append(Span(phrase, 0, 0, "np"))
    return spans


def _aliases(full_names: set[str], *, surnames: bool) -> dict[str, str]:
    """A single name that starts (or, with ``surnames``, ends) exactly one full name in the chunk."""
    by_part: dict[str, set[str]] = {}
    for full in full_names:
        parts = full.split()
        if len(parts) >= 2:
            by_part.setdefault(parts[0], set()).add(full)
            if surnames:
                by_part.setdefault(parts[-1], set()).add(full)
    return {part: next(iter(fulls)) for part, fulls in by_part.items() if len(fulls) == 1}


def read_sentences(sentences: list[Sentence], speakers: list[str], *, prose: bool,
                   day_first: bool | None = None) -> ChunkEntities:
    """Entities, descriptions and relations of a chunk's sentences."""
    ce = ChunkEntities()
    camel_ok = {s.replace(" ", "") for s in speakers}
    known = {w for s in speakers for w in s.split()} | set(speakers)
    np_counts: Counter = Counter()
    full_names = set(speakers)
    for s in sentences:
        s.spans = find_spans(s, camel_ok, day_first)
        for sp in s.spans:
            if sp.kind == "np":
                np_counts[sp.name] += 1
            elif sp.kind == "cap" and not sp.at_start:
                known.add(sp.name)
            if (sp.kind == "cap" and sp.vocative or sp.label == "PERSON") and len(sp.name.split()) >= 2:
                full_names.add(sp.name)
    alias = _aliases(full_names, surnames=prose)
    for name in speakers:
        key = ce.add(name, "speaker", None, None)
        if key:
            ce.persons.add(key)
    for s in sentences:
        _read_sentence(ce, s, known, alias, full_names, np_counts)
    return ce


def _read_sentence(ce: ChunkEntities, s: Sentence, known: set[str], alias: dict[str, str],
                   full_names: set[str], np_counts: Counter) -> None:
    present: list[str] = []
    token_keys: dict[int, str] = {}
    for sp in s.spans:
        name = sp.name
        if sp.kind in ("cap", "ner") and name in alias:
            name = alias[name]
            sp.vocative = True
        elif sp.kind == "cap" and sp.at_start and len(name.split()) == 1 and name not in known:
            continue
        elif sp.kind == "np" and len(name.split()) == 1 and np_counts[name] < 2:
            continue
        key = ce.add(name, sp.kind, s.text, s.speaker)
        if not key:
            continue
        label = sp.label
        if label:
            ce.ner_votes.setdefault(key, Counter())[label] += 1
        if sp.kind == "cap" and (sp.vocative or name in full_names or key in ce.persons):
            ce.persons.add(key)  # a recogniser's PERSON is a vote, checked like its other labels
        if sp.kind == "cap" and sp.place_cue:
            ce.places.add(key)
        if sp.kind == "np":
            ce.keywords[ce.names[key]] += 1
        if key not in present:
            present.append(key)
        if s.parsed is not None and sp.kind != "np":
            for tok in s.parsed:
                rel = tok.idx - s.parsed.start_char
                if sp.start <= rel < sp.end:
                    token_keys[tok.i] = key
    desc = trim(f"{s.speaker}: {s.text}" if s.speaker else s.text, MAX_SENTENCE)
    linked: set[tuple[str, str]] = set()
    if s.parsed is not None and token_keys:
        for link in sentence_links(s.parsed, lambda tok: token_keys.get(tok.i)):
            ce.relate(link.source, link.target, LINK_WEIGHT, desc, link.predicate, link=True)
            linked.add((min(link.source, link.target), max(link.source, link.target)))
    if s.speaker:
        sk = normalize_entity_name(s.speaker)
        if sk in ce.names and sk not in present:
            present.insert(0, sk)
    for i, a in enumerate(present):
        for b in present[i + 1:]:
            if (min(a, b), max(a, b)) not in linked:
                ce.relate(a, b, 1.0, desc, "co-occurrence")


def add_chat_structure(ce: ChunkEntities, messages: list[Message], session_time: str | None,
                       speakers: list[str], *, session_entities: bool) -> None:
    """Conversation pairs (consecutive turns by different speakers), the session-time entity
    and a description for speakers nobody mentions."""
    prev = None
    for msg in messages:
        if msg.speaker and prev and msg.speaker != prev.speaker:
            a, b = normalize_entity_name(prev.speaker), normalize_entity_name(msg.speaker)
            if a in ce.names and b in ce.names:  # a speaker too short to be an entity ("A:", "Q:")
                when = f" at {session_time}" if session_time else ""
                pair = sorted((a, b))
                rec = ce.relations.setdefault((pair[0], pair[1]), Relation())
                d = trim(f"{ce.names[pair[0]]} and {ce.names[pair[1]]} chat{when}", MAX_SENTENCE)
                rec.add(1.0, d, "conversation", first=True)
        if msg.speaker:
            prev = msg
    if session_time and session_entities and speakers:
        k = ce.add(canonical_timestamp(session_time) or session_time, "date", None, None)
        if k:
            people = list(dict.fromkeys(speakers))
            first = messages[0].text if messages else ""
            ce.sentences[k] = [trim(f"Chat session at {session_time} between {', '.join(people)}. "
                                    f"{messages[0].speaker}: {first}", MAX_DESCRIPTION)]
            for p in people:
                pk = normalize_entity_name(p)
                if pk in ce.names:
                    ce.relate(k, pk, 1.0, f"{p} chats at {session_time}", "session time")
    for s in dict.fromkeys(speakers):
        k = normalize_entity_name(s)
        if not ce.sentences.get(k):
            own = next((m.text for m in messages if m.speaker == s), "")
            ce.sentences[k] = [trim(f"{s}: {own}", MAX_SENTENCE)]


def add_subject(chunk: Chunk, ce: ChunkEntities) -> None:
    """Record the chunk's subject (a heading anywhere, a title line only at a document's start)."""
    title = chunk_subject(chunk.text, chunk.order)
    key = normalize_entity_name(title) if title else ""
    if not key:
        return
    if key not in ce.names:
        ce.names[key] = clean_display_name(title)
        ce.kinds[key] = "cap"
    if not ce.sentences.get(key):
        body = chunk.text.strip().split("\n", 1)[1] if "\n" in chunk.text.strip() else ""
        ce.sentences[key] = [trim(split_sentences(body)[0], MAX_SENTENCE)] if body.strip() else []
    ce.subject = key
