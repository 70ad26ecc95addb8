"""Dates in every spelling, read to one value: ISO (``2026-01-06``), numeric (``06/01/2026``,
day/month order a setting), written with or without a year (``January 6th, 2026``, ``6 Jan``,
``the 6th of January``) and, only in a timestamp context, a bare 8-digit ``20260106`` (followed
by a time, or after "on", "since", "Time:" ...).

Two uses: :func:`canonical_date` gives an entity one name whatever the spelling (``2026-01-06``
with a year, ``January 6`` without; :func:`canonical_timestamp` ``2026-01-06 13:00``), and :func:`temporal_tokens` adds tokens for lexical
matching: ``date0106`` and ``month01`` for every day, ``date20260106`` when the year is known,
``month12`` for "in December".

Numeric day/month order: a number above 12 decides it (``25/03/2026`` is always 25 March);
otherwise ``day_first`` does, by default :data:`DAY_FIRST` (month first, as in ``dateutil``,
unless the environment sets ``MINIRAG_DAY_FIRST=1``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

#: how an ambiguous numeric date (03/04/2026) is read everywhere (extraction, queries, lexical
#: matching) unless a call says otherwise: month first, or day first with ``MINIRAG_DAY_FIRST=1``
DAY_FIRST = os.environ.get("MINIRAG_DAY_FIRST", "").strip().lower() in ("1", "true", "yes")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")
_MONTHS = {name: index for index, names in enumerate([
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
         r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:1[6-9]|20)\d{2})"
_RANGE = r"(?:\s*(?:-|–|to)\s*(\d{1,2})(?:st|nd|rd|th)?)?"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("compact", re.compile(r"(?:(?<=\bon )|(?<=\bsince )|(?<=\bbefore )|(?<=\bafter )|(?<=\buntil )|(?<=\bfrom )|"
                           r"(?<=\bby )|(?<=\bat )|(?<=:)|(?<=: )|^)"
                           r"((?:19|20)\d{2})(\d{2})(\d{2})(?!\d)|(?<!\d)((?:19|20)\d{2})(\d{2})(\d{2})"
                           r"(?=[_T ]?\d{1,2}:\d{2})", re.IGNORECASE | re.MULTILINE)),
    ("iso", re.compile(r"(?<![\d.\-/])((?:19|20)\d{2})([-/.])(\d{1,2})\2(\d{1,2})(?![\d.\-/]\d)")),
    ("numeric", re.compile(r"(?<![\d.\-/])(\d{1,2})([/.\-])(\d{1,2})\2((?:19|20)\d{2}|\d{2})(?![\d.\-/]?\d)")),
    ("month_day", re.compile(rf"\b{_MONTH}\s+{_DAY}{_RANGE}(?:,?\s+{_YEAR})?(?![\d:])", re.IGNORECASE)),
    ("day_month", re.compile(rf"\b{_DAY}{_RANGE}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b", re.IGNORECASE)),
]
#: every compact date holds eight digits from 19xx or 20xx: this quick search rules out the
#: compact pattern (whose look-behinds cost ~0.4 ms per 600-character text) for most texts
_COMPACT_HINT = re.compile(r"(?:19|20)\d{6}")
_STAMP = re.compile(r"^((?:19|20)\d{2})(\d{2})(\d{2})[_T ](\d{1,2}):(\d{2})$")
_MONTH_ALONE = re.compile(r"\b(?:in|during|of|early|late|mid|since|until|this|last|next)\s+"
                          r"(january|february|march|april|june|july|august|september|october|november|december)\b",
                          re.IGNORECASE)


@dataclass(frozen=True)
class DayDate:
    """One day, its year unknown when the text did not give it."""

    month: int
    day: int
    year: int | None = None
    last_day: int | None = None  # "March 3-5": the range's end

    def canonical(self) -> str:
        """``2026-01-06`` with a year, ``January 6`` without."""
        if self.year is not None:
            return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"
        return f"{MONTH_NAMES[self.month - 1]} {self.day}"


def _valid(month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31


def _numeric(a: int, b: int, day_first: bool) -> tuple[int, int] | None:
    """(month, day) of ``a/b``: a number above 12 decides, else the setting."""
    if a > 12 and b <= 12:
        return b, a
    if b > 12 and a <= 12:
        return a, b
    if a <= 12 and b <= 12:
        return (b, a) if day_first else (a, b)
    return None


def _read(kind: str, m: re.Match[str], day_first: bool) -> DayDate | None:
    g = m.groups()
    if kind == "compact":
        year, month, day = (g[0], g[1], g[2]) if g[0] else (g[3], g[4], g[5])
        return DayDate(int(month), int(day), int(year)) if _valid(int(month), int(day)) else None
    if kind == "iso":
        month, day, year = int(g[2]), int(g[3]), int(g[0])
    elif kind == "numeric":
        order = _numeric(int(g[0]), int(g[2]), day_first)
        if order is None:
            return None
        month, day = order
        if len(g[3]) == 2 and g[1] != "/":
            return None  # "1.2.10" is a version, "1/2/10" a date
        year = int(g[3]) + (2000 if len(g[3]) == 2 else 0)
        return DayDate(month, day, year) if _valid(month, day) else None
    elif kind == "month_day":
        month, day, year = _MONTHS[g[0].lower()], int(g[1]), int(g[3]) if g[3] else None
        last = int(g[2]) if g[2] else None
        return DayDate(month, day, year, last) if _valid(month, day) else None
    else:
        month, day, year = _MONTHS[g[2].lower()], int(g[0]), int(g[3]) if g[3] else None
        last = int(g[1]) if g[1] else None
        return DayDate(month, day, year, last) if _valid(month, day) else None
    return DayDate(month, day, year) if _valid(month, day) else None


def find_day_dates(text: str, *, day_first: bool | None = None) -> list[tuple[int, int, DayDate]]:
    """(start, end, date) of every day-level date expression, without overlaps."""
    day_first = DAY_FIRST if day_first is None else day_first
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, int, DayDate]] = []
    for kind, pattern in _PATTERNS:
        if kind == "compact" and not _COMPACT_HINT.search(text):
            continue
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            date = _read(kind, m, day_first)
            if date is None or kind == "month_day" and m.group(1).lower() == "may" and not m.group(4) \
                    and _may_is_a_verb(text, m):
                continue
            taken.append((m.start(), m.end()))
            found.append((m.start(), m.end(), date))
    return sorted(found, key=lambda f: f[0])


def _may_is_a_verb(text: str, m: re.Match[str]) -> bool:
    """"may 5 people come" is not a date: a lower-case "may" without a year or ordinal."""
    return m.group(0)[0] == "m" and not re.search(r"\d(?:st|nd|rd|th)", m.group(0))


def canonical_date(text: str, *, day_first: bool | None = None) -> str | None:
    """The canonical name of ``text`` when all of it is one day's date, else None."""
    found = find_day_dates(text.strip(), day_first=day_first)
    if len(found) == 1 and found[0][0] == 0 and found[0][1] == len(text.strip()):
        return found[0][2].canonical()
    return None


def canonical_timestamp(text: str) -> str | None:
    """``2026-01-06 13:00`` for a compact timestamp ``20260106_13:00``, else None."""
    m = _STAMP.match(text.strip())
    if not m or not _valid(int(m.group(2)), int(m.group(3))):
        return None
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)} {int(m.group(4)):02d}:{m.group(5)}"


def temporal_tokens(text: str, *, day_first: bool | None = None) -> list[str]:
    """Canonical date tokens for every date expression in ``text``."""
    tokens: list[str] = []
    for _s, _e, date in find_day_dates(text, day_first=day_first):
        days = [date.day] + ([date.last_day] if date.last_day and date.last_day > date.day else [])
        for day in days:
            if not _valid(date.month, day):
                continue
            tokens += [f"date{date.month:02d}{day:02d}", f"month{date.month:02d}"]
            if date.year is not None:
                tokens.append(f"date{date.year:04d}{date.month:02d}{day:02d}")
    for match in _MONTH_ALONE.finditer(text):
        tokens.append(f"month{_MONTHS[match.group(1).lower()]:02d}")
    return tokens


def with_temporal_tokens(text: str, *, day_first: bool | None = None) -> str:
    """``text`` with underscores split (``20260106_13:00`` -> ``20260106 13:00``) and the
    canonical date tokens appended, for a lexical index."""
    return text.replace("_", " ") + " " + " ".join(temporal_tokens(text, day_first=day_first))
