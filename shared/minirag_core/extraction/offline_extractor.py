"""The embedded default extractor: entities and relations without any language model.

Like LazyGraphRAG's NLP extraction, entities are read with rules from the text:

* chat speakers (``MariaGarcia:`` lines) become PERSON entities named ``Maria Garcia``;
* quoted titles (``"Viva la Vida"``), dates and times (``this Sunday``, ``March 5th``, ``3 PM``);
* runs of capitalised words (a single word at a sentence start only when the chunk uses it
  elsewhere mid-sentence or as a speaker name), with a short stop list;
* key noun phrases: multi-word lower-case phrases right after a determiner or possessive
  (``my rosemary focaccia``), and single nouns so introduced at least twice in the chunk.

A lone first name that is the first token of exactly one full person name in the same chunk
is read as that person (``Maria`` -> ``Maria Garcia``). Each entity's description is the
sentences that mention it. Relations are co-occurrences within one message (the speaker
counts as present in their own message), weighted by how often they co-occur in the chunk,
plus the chunk's conversation pairs (consecutive turns by different speakers).
Types come from :class:`~minirag_core.entity_typing.EntityTyper`.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..entity_typing import DATE_TIME, LOCATION, PERSON, WORK_OF_ART, EntityTyper, new_typer, rule_type
from ..names import clean_display_name, normalize_entity_name
from ..types import Chunk, ExtractedEntity, ExtractedRelation, ExtractionResult
from .subjects import title_subject

MAX_DESCRIPTION = 300
MAX_SENTENCE = 220

# --- text structure -------------------------------------------------------------------------

_TIME_LINE = re.compile(r"^\s*Time:\s*(\d{8})(?:_(\d{1,2}:\d{2}))?\s*$")
_SPEAKER_LINE = re.compile(r"^([A-Z][A-Za-z]*(?:[A-Z][a-z]+|-[A-Za-z]+)*):[ \t]*(.*)$")
_CAMEL_SPLIT = re.compile(r"(?<=[a-z])(?=[A-Z])")
_CAMEL_NAME = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+|-[a-z]+)+$")
_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D"
_SENT_END = re.compile(rf"(?:[.!?…]+[\"'”’)]*|[{_EMOJI}]+)(?:\s+|$)|\n+")
_NON_SPEAKERS = {"Time", "Note", "PS", "P.S", "Re", "Subject", "Date", "Answer", "Question", "Http", "Https"}


def split_camel_name(token: str) -> str:
    """``MariaGarcia`` -> ``Maria Garcia``; ``KimMin-jun`` -> ``Kim Min-jun``."""
    return _CAMEL_SPLIT.sub(" ", token).strip()


@dataclass
class Message:
    speaker: str | None  # display name, e.g. "Maria Garcia"
    text: str
    sentences: list[str] = field(default_factory=list)


def parse_messages(text: str) -> tuple[list[Message], str | None]:
    """Chat lines -> messages (continuation lines join the previous one) and the session time."""
    messages: list[Message] = []
    session_time: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line in ("<END>", "<START>"):
            continue
        tm = _TIME_LINE.match(line)
        if tm:
            session_time = tm.group(1) + (f"_{tm.group(2)}" if tm.group(2) else "")
            continue
        sm = _SPEAKER_LINE.match(line)
        if sm and sm.group(1) not in _NON_SPEAKERS and len(sm.group(1)) <= 40:
            messages.append(Message(split_camel_name(sm.group(1)), sm.group(2).strip()))
        elif messages:
            messages[-1].text = (messages[-1].text + "\n" + line).strip()
        else:
            messages.append(Message(None, line))
    for m in messages:
        m.sentences = split_sentences(m.text)
    return messages, session_time


def split_sentences(text: str) -> list[str]:
    out, start = [], 0
    for m in _SENT_END.finditer(text):
        piece = text[start:m.end()].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


# --- span detection -------------------------------------------------------------------------

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
        r"\b20\d{6}(?:_\d{2}:\d{2})?\b",
    ]),
)
_DATE_LEAD = re.compile(r"^(?:in|of|early|late|mid|since|until|during|by)\s+", re.I)
_TIME_NORM = re.compile(r"(\d{1,2}(?::\d{2})?)\s?([AaPp])\.?[Mm]\.?")

_QUOTED = re.compile(r"[\"“]([^\"“”\n]{2,80}?)[\"”]")
_TOKEN = re.compile(r"[^\W_][\w'’\-]*")

#: capitalised words that are never (part of) an entity name
STOP_CAPS = {
    "I", "I'm", "I’m", "I'll", "I’ll", "I've", "I’ve", "I'd", "I’d", "Im", "OK", "Ok", "Okay", "Hey",
    "Hi", "Hello", "Thanks", "Thank", "Yes", "Yeah", "Yep", "No", "Nope", "Oh", "Wow", "Haha", "Hahaha",
    "Lol", "LOL", "Sure", "Sounds", "Great", "Awesome", "Perfect", "Also", "But", "And", "So", "Just",
    "Let", "Let's", "Let’s", "Maybe", "Please", "Dear", "ASAP", "PS", "BTW", "OMG", "TBH", "A-game",
    "Weekend", "Cheers", "Bye", "Absolutely", "Totally", "Definitely", "Anyway", "Well", "Hmm",
    "Good", "Nice", "Cool", "Sweet", "Yay", "Ah", "Aw", "Aww", "Ugh", "Alright", "Right", "Exactly",
    "Sorry", "Welcome", "Congrats", "Congratulations", "Happy", "Merry", "Best", "Regards", "Love",
    "God", "Gosh", "Dude", "Bro", "Guys", "Everyone", "Team", "The", "A", "An", "It", "It's", "It’s",
    "You", "You're", "You’re", "We", "We're", "We’re", "He", "She", "They", "My", "Your", "Our",
    "This", "That", "What", "When", "Where", "Who", "Whom", "Whose", "Which", "How", "Why", "Did", "Do",
    "Does", "Is", "Was", "Are", "Were", "Will", "Would", "Can", "Could", "Should", "Have", "Has", "Had",
    "If", "Or", "In", "On", "At", "For", "With", "After", "Before", "During", "From", "To", "Of", "As",
    "Not", "Any", "All", "Some", "Here", "There", "Then", "Now", "Today", "Tonight", "Tomorrow",
    "Yesterday", "Mr", "Mrs", "Ms", "Dr", "Dear", "Hope", "Looking", "Can't", "Can’t", "Don't", "Don’t",
    "Be", "Been", "Being", "Get", "Got", "Make", "Made", "Go", "See", "Tell", "Ask", "Know", "Think",
    "Want", "Need", "Try", "Keep", "Take", "Give", "Come", "Enjoy", "Remember", "Check", "Feel",
    "Wanna", "Gonna", "Gotta", "Whoa", "Phew", "Btw", "Omg", "Ya", "Yo", "Hiya", "Howdy", "Lots",
    "Very", "Really", "Super", "Much", "More", "Most", "Many", "Each", "Every", "Both", "Either",
    "Neither", "Such", "Since", "While", "Until", "Because", "Though", "Although", "Once", "Still",
    "Even", "Yet", "Only", "Plus", "Actually", "Honestly", "Seriously", "Basically", "Hopefully",
}
_CONNECTORS = {"of", "the", "de", "la", "del", "von", "van", "da", "di", "du", "le", "y"}
_GREETING_BEFORE = re.compile(r"(?:\b(?:Hey|Hi|Hello|Dear|Thanks|Thank you|Bye|Cheers|Congrats)[,!]?\s+|,\s+)$")
_PLACE_BEFORE = re.compile(r"\b(?:at|near|visit|visited|visiting|trip to|went to|go to|going to|moved to|"
                           r"live in|lives in|living in|located in|head to|heading to)\s+(?:the\s+)?$",
                           re.I)
_QUESTION_LEAD = {"Did", "Does", "Do", "Is", "Was", "Are", "Were", "What", "When", "Where", "Who", "Whom",
                  "Whose", "Which", "How", "Why", "Will", "Would", "Can", "Could", "Should", "Has", "Have",
                  "Had", "In", "On", "At", "After", "Before", "During", "According", "The", "A", "An",
                  "If", "Besides", "Apart", "Between", "Among", "Except", "List", "Name", "Describe",
                  "Tell", "Give", "Please", "Compare", "Summarize", "Explain"}

# --- noun phrases ---------------------------------------------------------------------------

_NP_TRIGGERS = {"a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "some", "any",
                "these", "those", "this", "that", "more", "no"}
_STOPWORDS = set("""
a an the and or but if then else of to in on at by for with from about as into onto over under
up down out off again further once here there when where why how all any both each few more most
other some such no nor not only own same so than too very can will just don should now is are was
were be been being have has had having do does did doing would could might must shall may i me my
myself we our ours you your yours he him his she her hers it its they them their what which who
whom this that these those am get got getting go going gone went make made making take took taking
let lets know knew think thought want wanted need needed like liked love loved see saw seen try
tried keep kept give gave come came feel felt say said tell told ask asked look looking looks
sound sounds sounded seem seems help helps use used using find found put work works working
really totally definitely absolutely super pretty quite also maybe even still always never ever
gonna wanna gotta yeah yes okay ok oh wow haha lol thanks thank hey hi hello please sure
what's it's that's there's here's i'm you're we're they're i'll you'll we'll i've you've we've
i'd you'd can't don't won't isn't aren't didn't doesn't couldn't wouldn't shouldn't let's
one ones something anything everything nothing someone anyone everyone somebody everybody
lot lots bit kind sort way thing things stuff time times day days week weeks month months year years
moment moments idea ideas chance point part place places fun plan plans today tonight tomorrow
yesterday weekend morning afternoon evening night while end start rest sense mind heads head
minute minutes hour hours second seconds person people guy guys other others side vibe vibes
question questions answer reason step steps tip tips advice help difference deal news update
before after behind together sometime sometimes soon later again around through across along between
beyond near within without toward towards upon against among during since until via already almost
ago else enough instead anyway ahead away back often usually probably especially though although
because while whether yet ever once twice each every either neither per plus than like unlike
sounds sound awesome amazing gonna perfect ready excited glad happy sorry able sure right wrong
despite outside inside online offline forward afterwards someday throughout apart alive alone first
next better best worse worst high low fresh strong sooner alike overall together
makes make feels gives turns flows shows looks seems goes comes gets takes keeps helps brings adds
needs works means becomes hinges thrives elevates weigh weighs led caused showed happening started
compared buzzing pumping flowing coming going getting making taking added wrap shine fit fits
""".split())
_ADJ_STRIP = set("""
great good new fresh quick little big nice awesome amazing perfect favorite favourite special
delicious super cool fun best better whole next last first other same few many much own real
great huge small large tiny quick short long old young hot cold warm nice lovely wonderful
fantastic incredible excellent epic solid busy full free easy hard tough simple quick early late
usual regular certain different specific particular extra main entire proper local latest recent
upcoming exciting interesting beautiful gorgeous tasty yummy sweet healthy heavy quiet
cozy chill relaxing proper total complete bit decent serious major minor absolute ultimate true
memorable unforgettable unique exciting interesting devastating mesmerizing similar emotional
wild key crazy intense insane solid stunning incredible ideal important essential smooth
""".split())
_GENERIC_SINGLE = _STOPWORDS | _ADJ_STRIP | set("""
session sessions practice game games show music food dinner lunch breakfast meal job work
experience progress goal goals plan energy challenge challenges spot area stuff life world ones
team group friends friend chat conversation message info details detail photos photo pictures
blast reminder thoughts story space skills characters character couple wait trust relationships
change effort updates call role leader items system data vendors clients opinion project excitement
struggle creativity convo feeling feelings taste touch vibe mood future past journey approach
""".split())
_WORD_LOWER = re.compile(r"^[^\W\d_A-Z][^\W\d_]*(?:-[^\W\d_]+)*$")


def _normalise_date(text: str) -> str:
    text = _DATE_LEAD.sub("", text.strip())
    text = re.sub(r"\s+", " ", text)
    text = _TIME_NORM.sub(lambda m: f"{m.group(1)} {m.group(2).upper()}M", text)
    first, _, rest = text.partition(" ")
    if first.lower() in ("this", "next", "last", "coming"):
        text = first.lower() + (" " + rest if rest else "")
    return text


def find_dates(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, display name) of date/time expressions."""
    out = []
    for m in _DATE_PATTERNS.finditer(sentence):
        raw = m.group(0)
        if re.fullmatch(r"(?:in|of|early|late|mid|since|until|during|by)\s+May", raw, re.I):
            continue  # "May" alone is too often the verb
        out.append((m.start(), m.end(), _normalise_date(raw)))
    return out


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


def _masked(sentence: str, spans: Iterable[tuple[int, int, str]]) -> str:
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
            if t.lower() in _CONNECTORS and j + 1 < len(tokens) and _is_cap(tokens[j + 1][2]) \
                    and sentence[tokens[j][1]:tokens[j + 1][0]] == " ":
                run.append(j)
                j += 1
                continue
            break
        i = j
        words = [tokens[k][2] for k in run]
        starts_sentence = tokens[run[0]][0] == first_pos
        # drop stop words at the edges
        while words and (words[0] in STOP_CAPS or words[0].lower() in _CONNECTORS):
            words.pop(0)
            run.pop(0)
            starts_sentence = False if words else starts_sentence
        while words and (words[-1] in STOP_CAPS or words[-1].lower() in _CONNECTORS):
            words.pop()
            run.pop()
        if starts_sentence and len(words) > 1 and re.search(r"(?:ly|ing|ed)$", words[0]):
            words.pop(0)
            run.pop(0)
            starts_sentence = False
            while words and words[0].lower() in _CONNECTORS:
                words.pop(0)
                run.pop(0)
        if not words:
            continue
        # a stop word inside (e.g. "Jake I") splits the run: keep the part before it
        for k, w in enumerate(words):
            if w in STOP_CAPS and k > 0:
                words, run = words[:k], run[:k]
                while words and words[-1].lower() in _CONNECTORS:
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
        if tokens[i][2].lower() not in _NP_TRIGGERS:
            i += 1
            continue
        j = i + 1
        words: list[str] = []
        while j < len(tokens):
            gap = sentence[tokens[j - 1][1]:tokens[j][0]]
            w = tokens[j][2]
            if gap != " " or not _WORD_LOWER.match(w) or w in _STOPWORDS or w.endswith("ly"):
                if w in _ADJ_STRIP and not words and gap == " ":
                    j += 1  # leading adjective: skip
                    continue
                break
            words.append(w)
            j += 1
        while words and words[0] in _ADJ_STRIP:
            words.pop(0)
        while words and (words[-1] in _ADJ_STRIP or (words[-1].endswith("ed") and len(words[-1]) > 4)):
            words.pop()
        i = max(j, i + 1)
        if not words or len(words) > max_words + 1:
            continue
        if len(words) > max_words:
            words = words[-max_words:]
        if len(words) == 1 and (words[0] in _GENERIC_SINGLE or len(words[0]) < 4):
            continue
        out.append((" ".join(words), len(words)))
    return out


def extract_query_entities(text: str, *, max_entities: int = 8) -> list[str]:
    """Entity names in a question, found with the extractor's span rules.

    Quoted titles, dates/times, capitalised runs (CamelCase names split: ``MariaGarcia`` ->
    ``Maria Garcia``) and multi-word noun phrases; single noun phrases only when no named span
    was found.
    """
    names: list[str] = []
    nps: list[str] = []
    singles: list[str] = []
    for sent in split_sentences(text.strip()) or [text]:
        quoted = find_quoted(sent)
        dates = find_dates(sent)
        masked = _masked(sent, [(s, e, n) for s, e, n in quoted + dates])
        for _, _, n in quoted:
            names.append(n)
        caps = find_capitalised(masked, split_all_camel=True)
        for sp in caps:
            if sp.at_start and len(sp.name.split()) == 1 and sp.name in _QUESTION_LEAD:
                continue
            names.append(sp.name)
        names.extend(n for _, _, n in dates)
        masked2 = _masked(masked, [(sp.start, sp.end, sp.name) for sp in caps])
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


# --- the extractor --------------------------------------------------------------------------

def _trim(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class _ChunkEntities:
    names: dict[str, str] = field(default_factory=dict)  # key -> display
    kinds: dict[str, str] = field(default_factory=dict)  # key -> strongest kind
    sentences: dict[str, list[str]] = field(default_factory=dict)
    persons: set[str] = field(default_factory=set)
    places: set[str] = field(default_factory=set)
    relations: dict[tuple[str, str], list] = field(default_factory=dict)  # (k1,k2) -> [weight, descs, kw]
    keywords: Counter = field(default_factory=Counter)
    subject: str | None = None  # key of the entity the chunk is about (its title or heading)


def _add_subject(chunk: Chunk, ce: _ChunkEntities) -> None:
    """Record the chunk's subject (a heading anywhere, a title line only at a document's start)."""
    first_line = chunk.text.lstrip().split("\n", 1)[0]
    if chunk.order != 0 and not first_line.startswith("#"):
        return
    title = title_subject(chunk.text)
    key = normalize_entity_name(title) if title else ""
    if not key:
        return
    if key not in ce.names:
        ce.names[key] = clean_display_name(title)
        ce.kinds[key] = "cap"
    if not ce.sentences.get(key):
        body = chunk.text.strip().split("\n", 1)[1] if "\n" in chunk.text.strip() else ""
        ce.sentences[key] = [_trim(split_sentences(body)[0], MAX_SENTENCE)] if body.strip() else []
    ce.subject = key


_PRIORITY = {"speaker": 4, "quoted": 3, "date": 2, "cap": 1, "np": 0}


class OfflineExtractor:
    """Rule-based entity/relation extraction plus embedding zero-shot typing (no LLM)."""

    name = "offline:v2"  # bump when the rules change: cached extractions are keyed by it

    def __init__(self, embedder=None, *, typer: EntityTyper | None = None,
                 use_context: bool = False, session_entities: bool = True) -> None:
        self._embedder = embedder
        self._typer = typer
        self.use_context = use_context
        self.session_entities = session_entities

    @property
    def typer(self) -> EntityTyper:
        if self._typer is None:
            self._typer = new_typer(self._embedder)
        return self._typer

    # -- per chunk, no typing --
    def _read_chunk(self, chunk: Chunk) -> _ChunkEntities:
        messages, session_time = parse_messages(chunk.text)
        ce = _ChunkEntities()
        speakers = [m.speaker for m in messages if m.speaker]
        speaker_tokens = {s.replace(" ", "") for s in speakers}

        # pass 1: spans per sentence; words used mid-sentence are "known"
        per_sentence: list[tuple[int, str, list[Span]]] = []  # (message idx, sentence, spans)
        known = {w for s in speakers for w in s.split()} | set(speakers)
        np_counts: Counter = Counter()
        for mi, msg in enumerate(messages):
            for sent in msg.sentences:
                quoted = find_quoted(sent)
                dates = find_dates(sent)
                masked = _masked(sent, quoted + dates)
                caps = find_capitalised(masked, camel_ok=speaker_tokens)
                spans = [Span(n, s, e, "quoted") for s, e, n in quoted]
                spans += [Span(n, s, e, "date") for s, e, n in dates]
                spans += caps
                masked2 = _masked(masked, [(sp.start, sp.end, sp.name) for sp in caps])
                for phrase, _n in find_noun_phrases(masked2):
                    spans.append(Span(phrase, 0, 0, "np"))
                    np_counts[phrase] += 1
                for sp in caps:
                    if not sp.at_start:
                        known.add(sp.name)
                per_sentence.append((mi, sent, spans))

        # full person names in this chunk: speakers + vocative multi-word names
        full_names = set(speakers)
        for _, _, spans in per_sentence:
            for sp in spans:
                if sp.kind == "cap" and sp.vocative and len(sp.name.split()) >= 2:
                    full_names.add(sp.name)
        by_first: dict[str, set[str]] = {}
        for fn in full_names:
            parts = fn.split()
            if len(parts) >= 2:
                by_first.setdefault(parts[0], set()).add(fn)
        alias = {first: next(iter(fns)) for first, fns in by_first.items() if len(fns) == 1}

        def add(display: str, kind: str, sentence: str | None, speaker: str | None) -> str | None:
            display = clean_display_name(display)
            key = normalize_entity_name(display)
            if not key or len(key) < 2:
                return None
            if key not in ce.names or kind == "speaker":
                ce.names[key] = display
            if _PRIORITY[kind] > _PRIORITY.get(ce.kinds.get(key, ""), -1):
                ce.kinds[key] = kind
            if sentence:
                line = f"{speaker}: {sentence}" if speaker else sentence
                lst = ce.sentences.setdefault(key, [])
                if line not in lst:
                    lst.append(_trim(line, MAX_SENTENCE))
            return key

        for s in speakers:
            k = add(s, "speaker", None, None)
            if k:
                ce.persons.add(k)

        for mi, sent, spans in per_sentence:
            msg = messages[mi]
            in_message: list[str] = []
            for sp in spans:
                name = sp.name
                if sp.kind == "cap":
                    if sp.at_start and len(name.split()) == 1 and name not in known and name not in alias:
                        continue
                    if name in alias:
                        name = alias[name]
                        sp.vocative = True
                elif sp.kind == "np":
                    if len(name.split()) == 1 and np_counts[name] < 2:
                        continue
                k = add(name, sp.kind, sent, msg.speaker)
                if not k:
                    continue
                if sp.kind == "cap" and (sp.vocative or name in full_names or
                                         normalize_entity_name(name) in ce.persons):
                    ce.persons.add(k)
                if sp.kind == "cap" and sp.place_cue:
                    ce.places.add(k)
                if sp.kind == "np":
                    ce.keywords[ce.names[k]] += 1
                if k not in in_message:
                    in_message.append(k)
            sentence_keys = in_message
            if msg.speaker:
                sk = normalize_entity_name(msg.speaker)
                if sk in ce.names and sk not in sentence_keys:
                    sentence_keys = [sk] + sentence_keys
            desc = _trim(f"{msg.speaker}: {sent}" if msg.speaker else sent, MAX_SENTENCE)
            for a in range(len(sentence_keys)):
                for b in range(a + 1, len(sentence_keys)):
                    pair = tuple(sorted((sentence_keys[a], sentence_keys[b])))
                    rec = ce.relations.setdefault(pair, [0, [], {"co-occurrence"}])
                    rec[0] += 1
                    if desc not in rec[1]:
                        rec[1].append(desc)
                    rec[2].add("co-occurrence")

        # conversation pairs: consecutive turns by different speakers
        prev = None
        for msg in messages:
            if msg.speaker and prev and msg.speaker != prev.speaker:
                pair = tuple(sorted((normalize_entity_name(prev.speaker), normalize_entity_name(msg.speaker))))
                if not all(key in ce.names for key in pair):
                    prev = msg  # a speaker too short to be an entity ("A:", "Q:")
                    continue
                rec = ce.relations.setdefault(pair, [0, [], set()])
                rec[0] += 1
                rec[2].add("conversation")
                when = f" at {session_time}" if session_time else ""
                d = _trim(f"{ce.names[pair[0]]} and {ce.names[pair[1]]} chat{when}", MAX_SENTENCE)
                if d not in rec[1]:
                    rec[1].insert(0, d)
            if msg.speaker:
                prev = msg

        if session_time and self.session_entities and speakers:
            k = add(session_time, "date", None, None)
            if k:
                people = list(dict.fromkeys(speakers))
                first = messages[0].text if messages else ""
                ce.sentences[k] = [_trim(f"Chat session at {session_time} between {', '.join(people)}. "
                                         f"{messages[0].speaker}: {first}", MAX_DESCRIPTION)]
                for p in people:
                    if normalize_entity_name(p) not in ce.names:
                        continue
                    pair = tuple(sorted((k, normalize_entity_name(p))))
                    rec = ce.relations.setdefault(pair, [0, [], set()])
                    rec[0] += 1
                    rec[2].add("session time")
                    rec[1].append(f"{p} chats at {session_time}")
        # speakers never mentioned: describe them by their own first message
        for s in dict.fromkeys(speakers):
            k = normalize_entity_name(s)
            if not ce.sentences.get(k):
                own = next((m.text for m in messages if m.speaker == s), "")
                ce.sentences[k] = [_trim(f"{s}: {own}", MAX_SENTENCE)]
        return ce

    def _build(self, ce: _ChunkEntities, types: dict[str, str]) -> ExtractionResult:
        entities = [
            ExtractedEntity(name=display, type=types[key],
                            description=_trim(" ".join(ce.sentences.get(key, [])) or display, MAX_DESCRIPTION))
            for key, display in ce.names.items()
        ]
        relations = []
        for (a, b), (weight, descs, kws) in ce.relations.items():
            if a not in ce.names or b not in ce.names:
                continue
            order = [k for k in ("conversation", "session time", "co-occurrence") if k in kws]
            relations.append(ExtractedRelation(
                source=ce.names[a], target=ce.names[b],
                description=_trim(" ".join(descs), MAX_DESCRIPTION),
                keywords=", ".join(order), weight=float(weight)))
        keywords = [k for k, _ in ce.keywords.most_common(10)]
        subjects = [ce.names[ce.subject]] if ce.subject in ce.names else []
        return ExtractionResult(entities=entities, relations=relations, content_keywords=keywords,
                                subject_entities=subjects)

    def extract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]:
        iterator: Iterable[Chunk] = chunks
        if show_progress:
            try:
                from tqdm import tqdm

                iterator = tqdm(chunks, desc="offline extraction", unit="chunk")
            except ImportError:  # pragma: no cover
                pass
        read = [self._read_chunk(c) for c in iterator]
        for chunk, ce in zip(chunks, read):
            _add_subject(chunk, ce)
        # type every distinct non-person name once
        types: dict[str, str] = {}
        pending: dict[str, tuple[str, str | None]] = {}
        for ce in read:
            for key, display in ce.names.items():
                if key in ce.persons:
                    continue
                if key in ce.places and rule_type(display) in (None, LOCATION):
                    types.setdefault(key, LOCATION)
                    continue
                kind = ce.kinds.get(key)
                if kind == "date":
                    types.setdefault(key, DATE_TIME)
                    continue
                if kind == "quoted":
                    rt = rule_type(display)
                    types.setdefault(key, rt if rt and rt != DATE_TIME else WORK_OF_ART)
                    continue
                if key not in pending and key not in types:
                    ctx = (ce.sentences.get(key) or [None])[0] if self.use_context and kind == "cap" else None
                    pending[key] = (display, ctx)
        if pending:
            keys = list(pending)
            ctxs = [pending[k][1] for k in keys] if self.use_context else None
            for k, t in zip(keys, self.typer.type_of([pending[k][0] for k in keys], ctxs)):
                types[k] = t
        results = []
        for ce in read:
            local = {k: (PERSON if k in ce.persons else types[k]) for k in ce.names}
            results.append(self._build(ce, local))
        return results

    async def aextract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]:
        return await asyncio.to_thread(self.extract, chunks, show_progress=show_progress)


__all__ = ["OfflineExtractor", "extract_query_entities", "parse_messages", "split_camel_name",
           "find_dates", "find_quoted", "find_capitalised", "find_noun_phrases", "split_sentences"]
