"""Entity typing without a language model: rules first, then zero-shot embedding similarity.

Used by the offline ("embedded default") extractor and query mapper. Names are typed by

1. rules: date/time patterns, known person names, honorifics, holiday names,
   place / organisation / event suffixes;
2. zero-shot: cosine similarity between the embedded name (optionally with a short
   context snippet) and the embedded descriptions of :data:`TYPE_POOL`.

Zero-shot results are cached per normalised name (and context-free), so a corpus
embeds every distinct name once.
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

#: type -> description embedded for zero-shot typing (phrased like the things it should attract).
TYPE_POOL: dict[str, str] = {
    PERSON: "a person: a man or woman, friend, neighbor, landlord, coach, player, musician, "
            "character, someone's first name and last name",
    LOCATION: "a place or location: a city, country, street, park, building, restaurant, cafe, "
              "stadium, basement, apartment, neighborhood, venue",
    ORGANIZATION: "an organization: a company, business, brand, sports team, football club, band, "
                  "school, shop, institution",
    EVENT: "an event: a party, festival, holiday, concert, match, tournament, league, "
           "celebration, sale, exhibition, meeting, session",
    DATE_TIME: "a date or time: a day of the week, month, weekend, morning, evening, "
               "hour, o'clock, PM, AM",
    PRODUCT: "a product or object: a device, gadget, instrument, equipment, tool, furniture, "
             "appliance, item to buy, console",
    FOOD: "food to eat: a dish, meal, curry, soup, bread, noodles, pizza, burger, salad, "
          "dessert, snack, cake, fruit, vegetables, cuisine",
    BEVERAGE: "a beverage to drink: coffee, tea, latte, milk, juice, wine, beer, smoothie, lemonade",
    ACTIVITY: "an activity: a sport, exercise, workout, hobby, training, stretching, playing, "
              "practice, game of football, running",
    CONCEPT: "an abstract concept or topic: an idea, plan, goal, policy, strategy, feeling, "
             "skill, problem, advice",
    WORK_OF_ART: "a work of art or title: a song, album, book, film, movie, TV show, series, "
                 "video game, painting",
    NATIONALITY: "a nationality, language or culture: Chinese, Thai, Greek, Italian, English",
}

#: short prototypes per type; a name's score for a type is max(description, best prototype)
TYPE_EXAMPLES: dict[str, list[str]] = {
    PERSON: ["a friend", "Maria Garcia", "Dr. Chen", "the landlord", "a singer", "an author"],
    LOCATION: ["Paris", "Japan", "the park", "a restaurant", "the cafe", "the basement",
               "the stadium", "downtown", "the gym"],
    ORGANIZATION: ["a company", "a football club", "a rock band", "a brand", "a university", "a government agency",
                   "a software foundation"],
    EVENT: ["a party", "a concert", "a festival", "Christmas", "the match", "a bake sale",
            "an exhibition", "a jam session", "a tournament"],
    DATE_TIME: ["Sunday", "3 PM", "next week", "March 5th", "tonight"],
    PRODUCT: ["a guitar", "a phone", "a fridge", "headphones", "a game console", "a laptop",
              "curtains", "equipment", "software", "a programming language", "an operating system", "an app"],
    FOOD: ["bread", "sourdough loaf", "noodles", "curry", "pad thai", "spring rolls", "pizza", "cake",
           "soup", "salad", "sandwich", "burger", "cookies", "steak", "focaccia", "dumplings"],
    BEVERAGE: ["coffee", "tea", "a latte", "milk", "juice", "wine", "beer", "a smoothie", "water"],
    ACTIVITY: ["running", "yoga", "a workout", "stretching", "playing football", "bench press",
               "hiking", "swimming", "gardening", "squats"],
    CONCEPT: ["an idea", "a strategy", "motivation", "a policy", "teamwork", "a goal", "the story",
              "a software license", "a network protocol", "an algorithm", "a scientific method"],
    WORK_OF_ART: ["a song", "a movie", "a novel", "a TV series", "a video game", "a documentary film",
                  "an album", "a poem"],
    NATIONALITY: ["Chinese", "Italian"],
}

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

_HONORIFICS = {"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "coach",
               "uncle", "aunt", "auntie", "grandma", "grandpa", "captain", "officer", "lady", "lord",
               "king", "queen", "prince", "princess", "mister"}
_HOLIDAYS = {"christmas", "christmas eve", "new year", "new year's eve", "new years eve",
             "lunar new year", "chinese new year", "spring festival", "halloween", "thanksgiving",
             "easter", "valentine's day", "valentines day", "mid-autumn festival", "oktoberfest",
             "boxing day", "black friday", "mother's day", "father's day", "independence day",
             "labor day", "el clasico", "world cup", "champions league", "premier league",
             "olympics", "euros", "super bowl"}
_LOCATION_SUFFIXES = {"street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "lane",
                      "drive", "park", "square", "plaza", "lake", "river", "mountain", "mountains",
                      "beach", "bridge", "city", "town", "village", "station", "airport", "museum",
                      "library", "cafe", "café", "coffeehouse", "restaurant", "bar", "pub", "bistro",
                      "grill", "diner", "gym", "hall", "stadium", "arena", "center", "centre", "mall",
                      "market", "hotel", "hospital", "garden", "gardens", "theater", "theatre",
                      "island", "valley", "coast", "county", "bay", "harbor", "harbour",
                      "kitchen", "bakery", "trattoria", "pizzeria", "cafeteria", "court", "field",
                      "downtown", "district", "province", "state", "apartment", "apartments", "tower"}
_LOCATION_PREFIXES = {"mount", "mt", "lake", "port", "fort", "san", "santa", "st."}
_ORG_SUFFIXES = {"inc", "ltd", "llc", "corp", "corporation", "company", "co", "group", "club", "fc",
                 "united", "band", "team", "university", "college", "institute", "association",
                 "society", "bank", "studio", "studios", "records", "entertainment", "agency",
                 "foundation", "academy", "school", "games", "labs", "films", "pictures", "technologies", "tech",
                 "media", "network", "orchestra", "choir", "committee", "council"}
_EVENT_SUFFIXES = {"festival", "party", "concert", "tournament", "cup", "league", "championship",
                   "championships", "sale", "fair", "conference", "wedding", "birthday", "exhibition",
                   "show", "marathon", "gala", "ceremony", "parade", "day", "eve", "night",
                   "anniversary", "match", "game", "lecture", "workshop", "meetup", "session"}
_NATIONALITIES = {"chinese", "thai", "greek", "italian", "english", "french", "german", "japanese",
                  "korean", "russian", "spanish", "american", "british", "indian", "mexican",
                  "vietnamese", "turkish", "european", "asian", "african", "brazilian",
                  "portuguese", "dutch", "swedish", "canadian", "australian", "irish", "scottish",
                  "cantonese", "mandarin", "sichuan"}


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
        if last in _LOCATION_SUFFIXES:
            return LOCATION
        if tokens[0] in _LOCATION_PREFIXES and text[0].isupper():
            return LOCATION
    return None


class EntityTyper:
    """Assigns a :data:`TYPE_POOL` type to entity names: rules, then zero-shot similarity."""

    def __init__(self, embedder, *, type_pool: dict[str, str] | None = None,
                 known_persons: Iterable[str] = (), context_weight: float = 0.5,
                 rule_only_types: Iterable[str] = (NATIONALITY,), vectors_path: Path | None = None) -> None:
        self.embedder = embedder
        self.vectors_path = vectors_path  # where the type vectors persist between processes
        self.type_pool = dict(type_pool or TYPE_POOL)
        self.types = list(self.type_pool)
        # types reached by rules only (never by zero-shot): NATIONALITY pulls in "pad thai"
        self.rule_only_types = sorted(set(rule_only_types))
        self._zs_mask = np.array([0.0 if t in self.rule_only_types else 1.0 for t in self.types])
        self.known_persons = {normalize_entity_name(p) for p in known_persons}
        self.context_weight = context_weight
        self._type_vecs: np.ndarray | None = None
        self._cache: dict[str, str] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

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

    def type_of(self, names: list[str], contexts: list[str] | None = None) -> list[str]:
        """One type per name. ``contexts`` (same length) are optional snippets mentioning each name."""
        out: list[str | None] = []
        todo: dict[str, int] = {}  # normalised name -> index into todo lists
        todo_names: list[str] = []
        todo_ctx: list[str | None] = []
        for i, name in enumerate(names):
            t = rule_type(name, ())
            key = normalize_entity_name(name)
            if t is None and key in self.known_persons:
                t = PERSON
            if t is None:
                with self._lock:
                    t = self._cache.get(key)
            if t is None and key not in todo:
                todo[key] = len(todo_names)
                todo_names.append(clean_display_name(name) or name)
                todo_ctx.append(contexts[i] if contexts and i < len(contexts) else None)
            out.append(t)
        if todo_names:
            scores = self.zero_shot_scores(todo_names)
            with_ctx = [j for j, c in enumerate(todo_ctx) if c]
            if with_ctx and self.context_weight > 0:
                ctx_texts = [f"{todo_names[j]}: {todo_ctx[j][:160]}" for j in with_ctx]
                scores[with_ctx] += self.context_weight * self.zero_shot_scores(ctx_texts)
            scores = np.where(self._zs_mask > 0, scores, -np.inf)
            best = [self.types[k] for k in scores.argmax(axis=1)]
            with self._lock:
                for key, j in todo.items():
                    self._cache[key] = best[j]
        resolved: list[str] = []
        for name, t in zip(names, out):
            if t is None:
                t = self._cache[normalize_entity_name(name)]
            resolved.append(t)
        return resolved

    def nearest_types(self, text: str, k: int = 3, exclude: Iterable[str] = (),
                      vector: np.ndarray | None = None) -> list[str]:
        """The ``k`` types whose descriptions are most similar to ``text`` (``vector``: its embedding)."""
        vectors = None if vector is None else np.asarray(vector)[None]
        scores = np.where(self._zs_mask > 0, self.zero_shot_scores([text], vectors)[0], -np.inf)
        skip = set(exclude) | {t for t, m in zip(self.types, self._zs_mask) if m == 0}
        return [self.types[i] for i in np.argsort(-scores) if self.types[i] not in skip][:k]


# --- answer types for a question -----------------------------------------------------------

_Q_RULES: list[tuple[re.Pattern[str], list[str]]] = [
    (re.compile(r"\b(?:which|what) (?:restaurant|café|cafe|bar|bakery|shop|store|spot|pub|diner)\b"),
     [LOCATION, ORGANIZATION]),
    (re.compile(r"\b(?:which|what) (?:song|songs|album|book|books|movie|movies|film|films|show|shows|"
                r"series|tv show|video game|game|games|title|track|tune)\b"), [WORK_OF_ART]),
    (re.compile(r"\b(?:which|what) (?:band|team|club|company|brand|organization|organisation|school)\b"),
     [ORGANIZATION]),
    (re.compile(r"\b(?:which|what) (?:place|city|country|town|venue|location|park|street|room|area)\b"),
     [LOCATION]),
    (re.compile(r"\b(?:which|what) (?:event|events|party|festival|celebration|holiday|match|concert)\b"),
     [EVENT]),
    (re.compile(r"\b(?:which|what) (?:drink|drinks|beverage|beverages|coffee|tea|wine|beer)\b|\bdrink\b"),
     [BEVERAGE]),
    (re.compile(r"\b(?:which|what) (?:food|foods|dish|dishes|bread|meal|meals|snack|snacks|dessert|"
                r"cuisine|pizza|cake)\b|\b(?:eat|eating|ate|cook|cooking|bake|baking|order|dinner|lunch|"
                r"breakfast)\b"), [FOOD]),
    (re.compile(r"\b(?:which|what) (?:sport|sports|exercise|exercises|workout|workouts|activity|"
                r"activities|hobby|hobbies|stretch|stretches|training)\b"), [ACTIVITY]),
    (re.compile(r"\b(?:which|what) (?:product|item|items|gift|equipment|instrument|gadget|device|tool)\b|"
                r"\b(?:bring|buy|bought|purchase|gift)\b"), [PRODUCT]),
    (re.compile(r"\b(?:which|what) (?:person|friend|member|player|coach|neighbor|neighbour|landlord)\b"),
     [PERSON]),
    (re.compile(r"^\s*when\b|\bwhen (?:did|does|do|is|was|will|are|were)\b|\bwhat (?:time|date|day|days|"
                r"month|year|hour)\b|\bwhich (?:day|days|date|month|time|year)\b|\bhow (?:long|often)\b|"
                r"\btime interval\b"), [DATE_TIME]),
    (re.compile(r"\bwhere\b"), [LOCATION]),
    (re.compile(r"\b(?:who|whom|whose)\b"), [PERSON]),
]


def rule_answer_types(query: str) -> list[str]:
    """Answer types implied by question words, in rule order, without duplicates."""
    q = query.lower()
    found: list[tuple[int, str]] = []
    for pattern, types in _Q_RULES:
        m = pattern.search(q)
        if m:
            found.extend((m.start(), t) for t in types)
    # earlier cue in the question first (the wh-word usually comes first)
    found.sort(key=lambda x: x[0])
    out: list[str] = []
    for _, t in found:
        if t not in out:
            out.append(t)
    return out


def answer_types_for_query(query: str, embedder=None, *, typer: EntityTyper | None = None,
                           k: int = 3, vector: np.ndarray | None = None) -> list[str]:
    """Up to ``k`` predicted answer types: question-word rules, then zero-shot similarity to fill
    (``vector``: the query's embedding by the typer's embedder, where the caller has it)."""
    types = rule_answer_types(query)[:k]
    if len(types) < k and (typer is not None or embedder is not None):
        typer = typer or _typer_for(embedder)
        types += typer.nearest_types(query, k - len(types), exclude=types, vector=vector)
    return types[:k]


_TYPERS: dict[int, EntityTyper] = {}
_TYPERS_LOCK = threading.Lock()


def new_typer(embedder=None) -> EntityTyper:
    """A fresh typer over ``embedder`` (the bundled all-MiniLM-L6-v2 when None)."""
    if embedder is None:
        from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    return EntityTyper(embedder)


def _typer_for(embedder) -> EntityTyper:
    """One shared typer (type vectors embedded once) per embedder object."""
    with _TYPERS_LOCK:
        typer = _TYPERS.get(id(embedder))
        if typer is None or typer.embedder is not embedder:
            typer = EntityTyper(embedder)
            _TYPERS[id(embedder)] = typer
        return typer


__all__ = [
    "TYPE_POOL", "EntityTyper", "new_typer", "answer_types_for_query", "rule_answer_types", "rule_type",
    "is_date_time",
]
