"""Entity-name normalisation: case, quotes and whitespace variants map to one node id."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_QUOTES = "\"'`“”‘’«»„‚"
_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\s\W_]+|[\s\W_]+$", re.UNICODE)
_NO_QUOTES = {ord(q): None for q in _QUOTES}


@lru_cache(maxsize=1 << 16)
def clean_display_name(raw: str) -> str:
    """Strip quotes, stray punctuation at the ends and repeated whitespace; keep case."""
    text = unicodedata.normalize("NFKC", raw or "")
    text = _SPACE.sub(" ", text.translate(_NO_QUOTES)).strip()
    return _EDGE_PUNCT.sub("", text) or text


@lru_cache(maxsize=1 << 16)
def normalize_entity_name(raw: str) -> str:
    """Node id for an entity name: quote-free, whitespace-collapsed, upper-case.

    ``"Ada Byron"``, ``'ada  byron'`` and ``ADA BYRON`` all become ``ADA BYRON``. An empty result
    means the name held nothing usable.
    """
    return clean_display_name(raw).upper()
