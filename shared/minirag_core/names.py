"""Entity-name normalisation: case, quotes and whitespace variants map to one node id."""

from __future__ import annotations

import re
import unicodedata

_QUOTES = "\"'`“”‘’«»„‚"
_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\s\W_]+|[\s\W_]+$", re.UNICODE)


def clean_display_name(raw: str) -> str:
    """Strip quotes, stray punctuation at the ends and repeated whitespace; keep case."""
    text = unicodedata.normalize("NFKC", raw or "")
    text = text.translate({ord(q): None for q in _QUOTES})
    text = _SPACE.sub(" ", text).strip()
    text = _EDGE_PUNCT.sub("", text) if _EDGE_PUNCT.sub("", text) else text
    return text


def normalize_entity_name(raw: str) -> str:
    """Node id for an entity name: quote-free, whitespace-collapsed, upper-case.

    ``"Ada Byron"``, ``'ada  byron'`` and ``ADA BYRON`` all become ``ADA BYRON``. An empty result
    means the name held nothing usable.
    """
    return clean_display_name(raw).upper()
