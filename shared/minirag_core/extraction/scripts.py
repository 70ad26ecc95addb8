"""Which writing system a text is in, read from Unicode character names. The offline default's
rules and its spaCy model read English (and Latin-script text by its capitals); in scripts
written without spaces between words (Chinese, Japanese, Thai, ...) a "capitalised run" or a
recognised name can swallow a whole sentence, so such names are refused: a model (``--llm``)
serves those languages."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

#: scripts written without spaces between words
UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN")
#: the longest name (in characters) accepted in an unspaced script
MAX_UNSPACED_NAME = 8
#: the most words a name in any other non-Latin script may have
MAX_NAME_WORDS = 6


@lru_cache(maxsize=4096)
def script_of(char: str) -> str:
    """The script of a letter (``LATIN``, ``CJK``, ``CYRILLIC``...), from its Unicode name."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else ""


def scripts(text: str) -> dict[str, int]:
    """Letters per script."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            s = script_of(ch)
            counts[s] = counts.get(s, 0) + 1
    return counts


def latin_share(text: str) -> float:
    """The share of the text's letters that are Latin (1.0 for a text without letters)."""
    counts = scripts(text)
    total = sum(counts.values())
    return 1.0 if not total else counts.get("LATIN", 0) / total


def fits_a_name(display: str) -> bool:
    """False for a "name" that is a sentence: more than :data:`MAX_UNSPACED_NAME` characters of an
    unspaced script, or more than :data:`MAX_NAME_WORDS` words of another non-Latin script."""
    counts = scripts(display)
    unspaced = sum(n for s, n in counts.items() if s.startswith(UNSPACED))
    if unspaced > MAX_UNSPACED_NAME:
        return False
    other = sum(n for s, n in counts.items() if s != "LATIN") - unspaced
    return not (other and other >= counts.get("LATIN", 0) and len(display.split()) > MAX_NAME_WORDS)


__all__ = ["fits_a_name", "latin_share", "script_of", "scripts"]
