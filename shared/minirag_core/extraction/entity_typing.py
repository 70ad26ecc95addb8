"""Entity typing without a language model: rules first, then zero-shot embedding similarity
only where it is confident; otherwise no type.

Used by the offline ("embedded default") extractor. Names are typed by

1. rules: date/time patterns, known person names, honorifics, holiday names,
   place / organisation / event suffixes;
2. zero-shot: cosine similarity between the embedded name (optionally with a short
   context snippet) and the embedded descriptions and prototypes of :data:`TYPE_POOL`,
   taken only when the best type is similar enough and clearly ahead of the second
   (:data:`MIN_SIMILARITY`, :data:`MARGIN`); the same scores check a recogniser's label
   (:meth:`EntityTyper.confirmed`).

Zero-shot scores are cached per normalised name, so a corpus embeds every distinct name once.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from minirag_core.graph.names import clean_display_name, normalize_entity_name

PERSON = "PERSON"
LOCATION = "LOCATION"
ORGANIZATION = "ORGANIZATION"
EVENT = "EVENT"
DATE_TIME = "DATE AND TIME"
PRODUCT = "PRODUCT"
FOOD = "FOOD"
BEVERAGE = "BEVERAGE"
ACTIVITY = "ACTIVITY"
CONCEPT = "CONCEPT"
WORK_OF_ART = "WORK OF ART"
NATIONALITY = "NATIONALITY"

#: type -> description embedded for zero-shot typing (generic: the kinds of things of any domain it names)
TYPE_POOL: dict[str, str] = {
    PERSON: "a person: a man or woman, someone's first and last name, an author, artist, politician, "
            "scientist, athlete, fictional character",
    LOCATION: "a place: a city, country, region, river, mountain, island, street, building, address",
    ORGANIZATION: "an organization: a company, business, institution, government agency, political party, "
                  "university, sports team, band, publisher",
    EVENT: "an event: a war, battle, election, festival, ceremony, conference, competition, tournament, meeting",
    DATE_TIME: "a date or time: a year, month, day of the week, hour, century, period of time",
    PRODUCT: "a product: a device, machine, vehicle, weapon, software application, operating system, "
             "programming language, tool",
    FOOD: "food to eat: a dish, meal, ingredient, fruit, vegetable, dessert",
    BEVERAGE: "a beverage to drink: coffee, tea, juice, milk, wine, beer",
    ACTIVITY: "an activity: a sport, hobby, exercise, craft, pastime",
    CONCEPT: "an abstract concept: an idea, theory, method, field of study, technical term, protocol, "
             "data format, law",
    WORK_OF_ART: "a creative work: a book, novel, film, song, album, painting, poem, television series",
    NATIONALITY: "a nationality, ethnic group, religion or language",
}

#: short prototypes per type (ordinary English words); a name's score for a type is max(description, best prototype)
TYPE_EXAMPLES: dict[str, list[str]] = {
    PERSON: ["a woman", "a man", "an author", "a singer"],
    LOCATION: ["a city", "a country", "a river", "a street"],
    ORGANIZATION: ["a company", "a university", "a government agency", "a football club"],
    EVENT: ["a war", "an election", "a festival", "a concert"],
    DATE_TIME: ["a year", "a month", "a weekday"],
    PRODUCT: ["a phone", "a car", "software", "an operating system", "a programming language"],
    FOOD: ["bread", "soup", "rice", "fruit"],
    BEVERAGE: ["coffee", "tea", "juice", "wine"],
    ACTIVITY: ["running", "swimming", "yoga", "a sport"],
    CONCEPT: ["an idea", "a theory", "an algorithm", "a protocol"],
    WORK_OF_ART: ["a song", "a movie", "a novel", "an album"],
    NATIONALITY: ["a nationality", "a language"],
}

#: zero-shot types only where the best type's similarity is at least MIN_SIMILARITY and leads the
#: second best by MARGIN (chosen on the labelled sample, benchmarks/quality/typing_precision.py);
#: otherwise the name stays untyped
MIN_SIMILARITY = 0.55
MARGIN = 0.15
#: a recogniser's type (or a weak cue's) stands unless the classifier scores another type more than
#: this much higher (0: the classifier's best type must be the recogniser's)
CONTRADICTION = 0.0

_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_DATE_TIME_RE = re.compile(
    r"^(?:(?:this|next|last|every|on|early|late|mid)\s+)*"
    r"(?:"
    rf"(?:{_WEEKDAYS})s?(?:\s+(?:morning|afternoon|evening|night|noon))?"
    rf"|(?:{_MONTHS})\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?(?:\s*(?:-|–|to)\s*\d{{1,2}}(?:st|nd|rd|th)?)?)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})(?:,?\s+\d{{4}})?"
    r"|\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)(?:\s*(?:-|–|to)\s*\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)?)?"
    r"|\d{1,2}:\d{2}"
    r"|(?:19|20)\d{2}(?:[-/]?\d{2}[-/]?\d{2})?(?:[_ T]\d{2}:\d{2})?"
    r"|\d{1,2}/\d{1,2}(?:/\d{2,4})?"
    r"|today|tonight|tomorrow|yesterday|weekend|weekday|noon|midnight|morning|afternoon|evening"
    r"|(?:the\s+)?(?:week|month|year|weekend)"
    r")$",
    re.IGNORECASE,
)

_HONORIFICS = {"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "captain", "lady", "lord",
               "king", "queen", "prince", "princess", "saint"}
_HOLIDAYS = {"christmas", "christmas eve", "new year", "new year's eve", "new years eve", "lunar new year",
             "chinese new year", "halloween", "easter", "valentine's day", "valentines day", "independence day",
             "labor day", "labour day"}
_LOCATION_SUFFIXES = {"street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "lane", "park", "square",
                      "plaza", "lake", "river", "mountain", "mountains", "beach", "bridge", "city", "town", "village",
                      "station", "airport", "museum", "cafe", "café", "restaurant", "bar", "pub", "hotel", "hospital",
                      "stadium", "arena", "mall", "market", "garden", "gardens", "theater", "theatre", "island",
                      "valley", "coast", "county", "bay", "harbor", "harbour", "district", "province", "tower",
                      "cathedral", "church", "castle", "palace"}
_LOCATION_PREFIXES = {"mount", "mt", "lake", "port", "fort", "san", "santa"}
_ORG_SUFFIXES = {"inc", "ltd", "llc", "corp", "corporation", "company", "co", "group", "club", "fc", "united",
                 "band", "team", "university", "college", "institute", "association", "society", "bank", "studios",
                 "entertainment", "agency", "foundation", "academy", "school", "labs", "films", "pictures",
                 "technologies", "orchestra", "choir", "committee", "council", "ministry", "department"}
_EVENT_SUFFIXES = {"festival", "concert", "tournament", "cup", "championship", "championships", "conference",
                   "wedding", "birthday", "exhibition", "marathon", "gala", "ceremony", "parade", "day", "eve",
                   "anniversary", "lecture", "workshop", "meetup", "war", "revolution", "election", "olympics"}
_NATIONALITIES = {"chinese", "thai", "greek", "italian", "english", "french", "german", "japanese", "korean",
                  "russian", "spanish", "american", "british", "indian", "mexican", "vietnamese", "turkish",
                  "european", "asian", "african", "brazilian", "portuguese", "dutch", "swedish", "canadian",
                  "australian", "irish", "scottish", "cantonese", "mandarin", "arabic", "polish"}


_NAME_WORD = re.compile(r"^[^\W\d_][^\W\d_A-Z]*(?:[-'’][^\W\d_][^\W\d_A-Z]*)*$")
_NAME_PARTICLES = {"von", "van", "der", "de", "da", "del", "della", "di", "du", "la", "le", "bin", "ibn", "al"}


def is_full_name(name: str) -> bool:
    """Whether a name is shaped like a person's full name: two to four capitalised words (no
    digits, no inner capitals), particles such as ``von`` or ``de`` allowed between them."""
    words = clean_display_name(name).split()
    if not 2 <= len(words) <= 4 or not words[0][:1].isupper() or not words[-1][:1].isupper():
        return False
    return all(w in _NAME_PARTICLES or (w[:1].isupper() and _NAME_WORD.match(w)) for w in words)


def is_date_time(name: str) -> bool:
    """True for day/month/time expressions: ``this Sunday``, ``March 5th``, ``3 PM``, ``20260108``."""
    return bool(_DATE_TIME_RE.match(clean_display_name(name) or name.strip()))


def rule_type(name: str, known_persons: Iterable[str] = ()) -> str | None:
    """Type by rules only, or None when no rule fires."""
    text = clean_display_name(name)
    if not text:
        return None
    if is_date_time(text):
        return DATE_TIME
    key = normalize_entity_name(text)
    persons = {normalize_entity_name(p) for p in known_persons}
    if key in persons:
        return PERSON
    low = text.lower()
    tokens = [t.strip(".,") for t in low.split()]
    if not tokens:
        return None
    if low in _HOLIDAYS or low.rstrip("s") in _HOLIDAYS:
        return EVENT
    if low in _NATIONALITIES:
        return NATIONALITY
    if len(tokens) >= 2 and tokens[0] in _HONORIFICS:
        return PERSON
    if len(tokens) >= 2:
        last = tokens[-1]
        if last in _ORG_SUFFIXES and text[0].isupper():
            return ORGANIZATION
        if last in _EVENT_SUFFIXES and text[0].isupper():
            return EVENT
        if last in _LOCATION_SUFFIXES and text[0].isupper():
            return LOCATION
        if tokens[0] in _LOCATION_PREFIXES and text[0].isupper():
            return LOCATION
    return None


class EntityTyper:
    """Types entity names by rules, else by zero-shot similarity to :data:`TYPE_POOL` when the
    classifier is confident (best similarity >= ``min_similarity``, ahead of the second best by
    ``margin``); otherwise a name stays untyped (None)."""

    def __init__(self, embedder, *, type_pool: dict[str, str] | None = None,
                 known_persons: Iterable[str] = (), context_weight: float = 0.5,
                 rule_only_types: Iterable[str] = (NATIONALITY,), vectors_path: Path | None = None,
                 min_similarity: float = MIN_SIMILARITY, margin: float = MARGIN,
                 contradiction: float = CONTRADICTION) -> None:
        self.embedder = embedder
        self.vectors_path = vectors_path  # where the type vectors persist between processes
        self.type_pool = dict(type_pool or TYPE_POOL)
        self.types = list(self.type_pool)
        # types reached by rules only (never by zero-shot): NATIONALITY pulls in dishes named after a cuisine
        self.rule_only_types = sorted(set(rule_only_types))
        self._zs_mask = np.array([0.0 if t in self.rule_only_types else 1.0 for t in self.types])
        self.known_persons = {normalize_entity_name(p) for p in known_persons}
        self.context_weight = context_weight
        self.min_similarity = min_similarity
        self.margin = margin
        self.contradiction = contradiction
        self._type_vecs: np.ndarray | None = None
        self._cache: dict[str, np.ndarray] = {}  # normalised name -> its zero-shot scores
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def settings(self) -> list:
        """What decides this typer's answers besides the embedder (for cache identities)."""
        return [self.type_pool, self.context_weight, sorted(self.known_persons), self.rule_only_types,
                self.min_similarity, self.margin, self.contradiction]

    @property
    def type_vectors(self) -> np.ndarray:
        """Description vectors (n_types, dim); prototypes are embedded alongside, once."""
        if self._type_vecs is None:
            texts = [self.type_pool[t] for t in self.types]
            owners = list(range(len(self.types)))
            for i, t in enumerate(self.types):
                for ex in TYPE_EXAMPLES.get(t, []):
                    texts.append(ex)
                    owners.append(i)
            vecs = self._embed_persisted(texts)
            self._proto_vecs = vecs
            self._proto_owner = np.array(owners)
            self._type_vecs = vecs[: len(self.types)]
        return self._type_vecs

    def _embed_persisted(self, texts: list[str]) -> np.ndarray:
        """Embed the type descriptions, or read them from ``vectors_path`` when it holds the
        vectors of exactly these texts by this embedder (a process then skips ~100 embeddings)."""
        key = hashlib.sha256("\x00".join([str(getattr(self.embedder, "name", "")), *texts]).encode()).hexdigest()
        path = self.vectors_path
        if path is not None and path.exists():
            try:
                with np.load(path) as stored:
                    if str(stored["key"]) == key:
                        return np.asarray(stored["vectors"], dtype=np.float32)
            except (OSError, ValueError, KeyError):
                pass  # unreadable: embed again and overwrite
        vectors = self.embedder.embed(texts)
        if path is not None:
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
            with os.fdopen(fd, "wb") as handle:
                np.savez(handle, key=np.array(key), vectors=vectors)
            os.replace(tmp, path)
        return vectors

    def zero_shot_scores(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> np.ndarray:
        """Per type: max cosine similarity to its description or a prototype, shape (len(texts), n_types)
        (``vectors``: the texts' embeddings, where the caller has them)."""
        if not texts:
            return np.zeros((0, len(self.types)), dtype=np.float32)
        self.type_vectors
        sims = (self.embedder.embed(list(texts)) if vectors is None else vectors) @ self._proto_vecs.T
        out = np.full((len(texts), len(self.types)), -1.0, dtype=np.float32)
        for i in range(len(self.types)):
            out[:, i] = sims[:, self._proto_owner == i].max(axis=1)
        return out

    def scores(self, names: Sequence[str], contexts: Sequence[str | None] | None = None) -> np.ndarray:
        """Zero-shot scores of each name (a context snippet adds ``context_weight`` times the
        scores of "name: context"), computed once per normalised name."""
        keys = [normalize_entity_name(n) for n in names]
        with self._lock:
            todo = {k: i for i, k in enumerate(keys) if k not in self._cache}
        if todo:
            idx = list(todo.values())
            texts = [clean_display_name(names[i]) or names[i] for i in idx]
            found = self.zero_shot_scores(texts)
            with_ctx = [j for j, i in enumerate(idx) if contexts and i < len(contexts) and contexts[i]]
            if with_ctx and self.context_weight > 0:
                ctx_texts = [f"{texts[j]}: {str(contexts[idx[j]])[:160]}" for j in with_ctx]
                found[with_ctx] = (found[with_ctx] + self.context_weight * self.zero_shot_scores(ctx_texts)) \
                    / (1 + self.context_weight)
            with self._lock:
                for key, row in zip(todo, found):
                    self._cache[key] = row
        with self._lock:
            rows = [self._cache[k] for k in keys]
        return np.array(rows, dtype=np.float32).reshape(len(keys), len(self.types))

    def confident_type(self, row: np.ndarray) -> str | None:
        """The best zero-shot type of one score row when the classifier is confident, else None."""
        masked = np.where(self._zs_mask > 0, row, -np.inf)
        first, second = np.sort(masked)[::-1][:2]
        if first < self.min_similarity or first - second < self.margin:
            return None
        return self.types[int(np.argmax(masked))]

    def contradicts(self, row: np.ndarray, entity_type: str) -> bool:
        """Whether the classifier scores another type ``contradiction`` above ``entity_type``."""
        if entity_type not in self.types:
            return False
        return bool(row.max() - row[self.types.index(entity_type)] > self.contradiction)

    def type_of(self, names: list[str], contexts: list[str] | None = None) -> list[str | None]:
        """One type or None per name. ``contexts`` (same length) are optional snippets mentioning each name."""
        out: list[str | None] = []
        pending: list[int] = []
        for i, name in enumerate(names):
            t = rule_type(name, ())
            if t is None and normalize_entity_name(name) in self.known_persons:
                t = PERSON
            if t is None:
                pending.append(i)
            out.append(t)
        if pending:
            rows = self.scores([names[i] for i in pending], [contexts[i] if contexts and i < len(contexts) else None
                                                            for i in pending])
            for i, row in zip(pending, rows):
                out[i] = self.confident_type(row)
        return out

    def confirmed(self, names: list[str], types: list[str]) -> list[bool]:
        """For each name, whether its type (from a recogniser or a weak cue) stands: a rule gives
        it, a PERSON is shaped like a full name, or the classifier does not score another type
        more than ``contradiction`` higher (it places unfamiliar names poorly)."""
        rows = self.scores(names)
        return [rule_type(n) == t or (t == PERSON and is_full_name(n)) or not self.contradicts(row, t)
                for n, t, row in zip(names, types, rows)]


def new_typer(embedder=None) -> EntityTyper:
    """A fresh typer over ``embedder`` (the bundled all-MiniLM-L6-v2 when None)."""
    if embedder is None:
        from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    return EntityTyper(embedder)


__all__ = [
    "TYPE_POOL", "EntityTyper", "new_typer", "rule_type", "is_date_time", "is_full_name",
]
