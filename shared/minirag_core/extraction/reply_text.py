"""Primitives shared by the model-reply parsers: coercion to text and field cleaning."""

from __future__ import annotations

import re
from typing import Any

QUOTE_CHARS = "\"'“”‘’`"
FENCE = re.compile(r"```[A-Za-z0-9_-]*")
_SPACE = re.compile(r"\s+")


def to_text(text: Any) -> str:
    """Coerce any input to ``str``; bytes are decoded as UTF-8 with replacement."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text).decode("utf-8", errors="replace")
    return "" if text is None else str(text)


def clean_field(field: str) -> str:
    """Strip whitespace, surrounding quotes and stray delimiter bits; collapse spaces."""
    text = _SPACE.sub(" ", field).strip()
    text = text.strip(QUOTE_CHARS + " <>|#()").strip()
    return text


def as_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(as_str(v) for v in value)
    return str(value)
