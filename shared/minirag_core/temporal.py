"""Temporal normalisation for lexical matching: "January 6th", "Jan 6", "20260106_13:00"
and "2026-01-06" all yield the tokens ``date0106`` and ``month01``; "in December" yields
``month12``. Chat logs and questions about them name days in many spellings."""

from __future__ import annotations

import re

_MONTHS = {name: index for index, names in enumerate([
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
         r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_COMPACT = re.compile(r"(?<!\d)(20\d{2})(\d{2})(\d{2})(?!\d)")
_ISO = re.compile(r"(?<!\d)(20\d{2})-(\d{1,2})-(\d{1,2})(?!\d)")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", re.IGNORECASE)
_MONTH_ALONE = re.compile(r"\b(?:in|during|of|early|late|mid|since|until|this|last|next)\s+"
                          r"(january|february|march|april|june|july|august|september|october|november|december)\b",
                          re.IGNORECASE)


def _date_tokens(month: int, day: int) -> list[str]:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return []
    return [f"date{month:02d}{day:02d}", f"month{month:02d}"]


def temporal_tokens(text: str) -> list[str]:
    """Canonical date tokens for every date expression in ``text``."""
    tokens: list[str] = []
    for match in _COMPACT.finditer(text):
        tokens += _date_tokens(int(match.group(2)), int(match.group(3)))
    for match in _ISO.finditer(text):
        tokens += _date_tokens(int(match.group(2)), int(match.group(3)))
    for match in _MONTH_DAY.finditer(text):
        tokens += _date_tokens(_MONTHS[match.group(1).lower().rstrip(".")], int(match.group(2)))
    for match in _DAY_MONTH.finditer(text):
        tokens += _date_tokens(_MONTHS[match.group(2).lower().rstrip(".")], int(match.group(1)))
    for match in _MONTH_ALONE.finditer(text):
        tokens.append(f"month{_MONTHS[match.group(1).lower()]:02d}")
    return tokens


def with_temporal_tokens(text: str) -> str:
    """``text`` with underscores split (``20260106_13:00`` -> ``20260106 13:00``) and the
    canonical date tokens appended, for a lexical index."""
    return text.replace("_", " ") + " " + " ".join(temporal_tokens(text))
