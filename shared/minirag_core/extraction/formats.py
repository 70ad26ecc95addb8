"""A chunk's text format, read from its shape (never from names), and its reading units.

* ``chat``: a transcript, several turns (``Name: text`` lines) by speakers who recur, optionally
  under a session header (``Time: 2026-01-08 11:00``);
* ``markdown``: headed text (``# Title`` lines) or fenced code;
* ``encyclopedic``: a title line, then prose;
* ``prose``: anything else (reports, e-mail, papers, manuals).

A caller may declare the format in a document's metadata (``text_format``); chunks inherit it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from minirag_core.extraction.subjects import title_subject

CHAT, MARKDOWN, ENCYCLOPEDIC, PROSE = "chat", "markdown", "encyclopedic", "prose"
FORMATS = (CHAT, MARKDOWN, ENCYCLOPEDIC, PROSE)
FORMAT_METADATA_KEY = "text_format"

_TIMESTAMP = r"(?:\d{8}(?:[_ T]\d{1,2}:\d{2})?|\d{4}-\d{2}-\d{2}(?:[ T_]\d{1,2}:\d{2}(?::\d{2})?)?)"
_SESSION_HEADER = re.compile(rf"^\s*(?:Time|Date|Session)\s*:\s*({_TIMESTAMP})\s*$", re.I)
_SPEAKER_LINE = re.compile(r"^([A-Z][A-Za-z]*(?:[A-Z][a-z]+|-[A-Za-z]+)*(?: [A-Z][a-z]+)?):[ \t]*(.*)$")
_CAMEL_SPLIT = re.compile(r"(?<=[a-z])(?=[A-Z])")
_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D"
_SENT_END = re.compile(rf"(?:[.!?…]+[\"'”’)]*|[{_EMOJI}]+)(?:\s+|$)|\n+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
#: line labels that never name a speaker
NON_SPEAKERS = {"Time", "Note", "PS", "P.S", "Re", "Subject", "Date", "Answer", "Question", "Http", "Https",
                "Warning", "Example", "Examples", "Usage", "Caution", "Tip", "Important", "See", "From", "To",
                "Cc", "Source", "Summary", "Description", "Copyright", "License", "Author", "Version"}
#: a chat needs this many speaker turns, by at least two speakers who each speak twice
MIN_TURNS, MIN_RECURRING_SPEAKERS = 3, 2


def split_camel_name(token: str) -> str:
    """``MariaGarcia`` -> ``Maria Garcia``; ``KimMin-jun`` -> ``Kim Min-jun``."""
    return _CAMEL_SPLIT.sub(" ", token).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences by end punctuation, emoji runs and line breaks (for chat messages and queries)."""
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


def session_time(line: str) -> str | None:
    """The timestamp of a session header line (``Time: 20260108_11:00``), else None."""
    m = _SESSION_HEADER.match(line)
    return m.group(1).replace(" ", "_") if m else None


def _speaker(line: str) -> tuple[str, str] | None:
    m = _SPEAKER_LINE.match(line)
    if not m or m.group(1) in NON_SPEAKERS or len(m.group(1)) > 40 or m.group(2).startswith("//"):
        return None
    return m.group(1), m.group(2)


def detect_format(text: str) -> str:
    """One of :data:`FORMATS`, from the text's shape."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    turns = Counter(s[0] for s in map(_speaker, lines) if s)
    n_turns = sum(turns.values())
    recurring = sum(1 for n in turns.values() if n >= 2)
    header = bool(lines) and session_time(lines[0]) is not None
    opens_session = header and len(lines) > 1 and _speaker(lines[1]) is not None
    if opens_session or n_turns >= MIN_TURNS and recurring >= MIN_RECURRING_SPEAKERS and n_turns >= 0.4 * len(lines):
        return CHAT
    if any(_HEADING.match(line) or _FENCE.match(line) for line in lines):
        return MARKDOWN
    if title_subject(text):
        return ENCYCLOPEDIC
    return PROSE


def chunk_format(text: str, metadata: dict | None = None) -> str:
    """The declared format (``metadata["text_format"]``) when valid, else the detected one."""
    declared = str((metadata or {}).get(FORMAT_METADATA_KEY, "")).lower()
    return declared if declared in FORMATS else detect_format(text)


@dataclass
class Message:
    """One chat turn (or, outside a chat, one block of text with no speaker)."""

    speaker: str | None  # display name, e.g. "Maria Garcia"
    text: str
    sentences: list[str] = field(default_factory=list)


def parse_messages(text: str) -> tuple[list[Message], str | None]:
    """Chat lines -> messages (continuation lines join the previous one) and the session time."""
    messages: list[Message] = []
    when: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line in ("<END>", "<START>"):
            continue
        stamp = session_time(line)
        if stamp:
            when = stamp
            continue
        turn = _speaker(line)
        if turn:
            messages.append(Message(split_camel_name(turn[0]), turn[1].strip()))
        elif messages:
            messages[-1].text = (messages[-1].text + "\n" + line).strip()
        else:
            messages.append(Message(None, line))
    for m in messages:
        m.sentences = split_sentences(m.text)
    return messages, when


def prose_lines(text: str, fmt: str) -> list[str]:
    """The text's paragraphs to parse as prose: hard-wrapped lines joined, Markdown heading and
    list marks dropped, fenced code skipped. Headings, list items, ``Label:`` lines and an
    encyclopedic title line stay paragraphs of their own (sentences never cross them)."""
    out: list[str] = []
    in_code = False
    joinable = False  # may the next line continue the last paragraph?
    for raw in text.splitlines():
        if _FENCE.match(raw):
            in_code, joinable = not in_code, False
            continue
        line = raw.strip()
        if in_code or not line:
            joinable = False
            continue
        heading = fmt == MARKDOWN and _HEADING.match(line)
        listed = _LIST_MARK.match(line)
        labelled = re.match(r"^[A-Z][\w-]{0,20}:\s", line)
        if heading:
            line = re.sub(r"^#{1,6}\s+|\s+#+$", "", line)
        line = _LIST_MARK.sub("", line).strip()
        if not line:
            continue
        if joinable and not (heading or listed or labelled):
            out[-1] += " " + line
        else:
            out.append(line)
        joinable = not heading and not (fmt == ENCYCLOPEDIC and len(out) == 1)
    return out


__all__ = ["CHAT", "MARKDOWN", "ENCYCLOPEDIC", "PROSE", "FORMATS", "Message", "chunk_format", "detect_format",
           "parse_messages", "prose_lines", "session_time", "split_camel_name", "split_sentences"]
