"""What a chunk is *about*, read from the document's shape: a Markdown heading, or the title
line of an encyclopedic passage (a short line without sentence punctuation, then prose).
Chat transcripts (``Name: text`` lines) and plain prose have no such subject."""

from __future__ import annotations

import re
from typing import Mapping

from minirag_core.graph.names import normalize_entity_name

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")  # "Lilu (mythology)" -> "Lilu"
MAX_TITLE_WORDS = 12
MIN_PROSE_WORDS = 8


def title_subject(text: str) -> str | None:
    """The subject named by the first line, or None when the first line is not a title."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    first = lines[0]
    heading = _HEADING.match(first)
    if heading:
        title = heading.group(1)
    elif (len(first.split()) <= MAX_TITLE_WORDS and len(first) <= 120 and first[0].isupper() or first[:1].isdigit()) \
            and not re.search(r"[.!?;,:]$|:\s", first):
        title = first
    else:
        return None
    if not any(len(line.split()) >= MIN_PROSE_WORDS for line in lines[1:3]):
        return None  # a list of short lines (a form, a chat, a table), not a passage
    title = _DISAMBIGUATION.sub("", title).strip()
    return title if len(title) >= 2 else None


def chunk_subject(text: str, order: int) -> str | None:
    """A chunk's subject: a heading anywhere, a title line only at a document's start (``order``
    0: a later chunk's first line is just a line of the document)."""
    if order != 0 and not text.lstrip().split("\n", 1)[0].startswith("#"):
        return None
    return title_subject(text)


def short_form(title: str) -> str | None:
    """The name a qualified title stands for: "Springfield, Ohio" -> "Springfield" (the
    qualifier after the first comma dropped), None when the title has no qualifier."""
    head, sep, qualifier = title.partition(", ")
    return head.strip() if sep and len(head.strip()) >= 2 and qualifier.strip() else None


def subject_names(key: str, names: Mapping[str, str]) -> list[str]:
    """The names a chunk is about, given its subject's key and the chunk's names by key: the
    subject's, and the short form of a qualified title when the text names it ("Springfield, Ohio"
    is also about the "Springfield" it names)."""
    if key not in names:
        return []
    short = normalize_entity_name(short_form(names[key]) or "")
    return [names[key]] + ([names[short]] if short and short != key and short in names else [])
