"""Tolerant parser of a model's extraction records.

Small models break the record format in many ways (wrong delimiters, lost quotes,
truncated output, prose, JSON instead of records). The parser keeps every record
that can be read, counts the rest, and never raises.

Records are located by their *start* (``("entity"<|>`` and variants), so a record
separator, delimiter or parenthesis inside one description can only corrupt that
record. The query_to_keyword reply is read by ``retrieval/query/reply.py``.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

import json_repair

from minirag_core.types import ExtractedEntity, ExtractedRelation, ExtractionResult
from minirag_core.extraction.reply_text import FENCE as _FENCE
from minirag_core.extraction.reply_text import QUOTE_CHARS as _QUOTE_CHARS
from minirag_core.extraction.reply_text import as_str as _as_str
from minirag_core.extraction.reply_text import clean_field as _clean_field
from minirag_core.extraction.reply_text import to_text as _to_text

logger = logging.getLogger("minirag_core")

_MAX_JSON_CHARS = 60_000  # json_repair is slow on long garbage; real replies are shorter
_OPEN_QUOTES = "\"“'"

_COMPLETE = re.compile(r"<?\|*\s*COMPLETE\s*\|*>|<\|+\s*COMPLETE\b", re.IGNORECASE)
_DELIM = r"(?:<\|+>?|\|+>?|\t)"
_KIND = r"(entity|relationship|relation|content[_ \-]?keywords)"
_RECORD_START = re.compile(
    r"(?:\(\s*[\"'“]?|[\"“]|^[ \t]*)\s*" + _KIND + r"\s*[\"'”]?\s*" + _DELIM,
    re.IGNORECASE | re.MULTILINE,
)
_DELIM_SPLIT = re.compile(r"(" + _DELIM + r")")
_CLOSE_STRONG = re.compile(r"[\"'”\d]\s*\)")
_CLOSE_WEAK = re.compile(r"\)\s*(?=#|\n|$|\()")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_STRICT_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")
_RECORDISH = re.compile(r"<\|")

_EXPECTED_FIELDS = {"entity": 3, "relationship": 5, "content_keywords": 1}


def _clean_markup(text: str) -> str:
    """Drop code fences, completion markers and NUL characters."""
    text = text.replace("\x00", "")
    text = _FENCE.sub("\n", text)
    return _COMPLETE.sub("\n", text)


def _kind_of(raw: str) -> str:
    raw = raw.lower()
    if raw.startswith("content"):
        return "content_keywords"
    return "relationship" if raw.startswith("relation") else "entity"


def _quote_open(field: str) -> bool:
    """True if the field opens a quote it never closes (a truncated field)."""
    stripped = field.strip()
    if not stripped or stripped[0] not in _OPEN_QUOTES:
        return False
    body = stripped[1:]
    return not body.rstrip().endswith(tuple(_QUOTE_CHARS)) or not body.strip()


def _record_end(segment: str, kind: str) -> tuple[str, bool]:
    """Cut one record's body out of its segment; return (body, closed)."""
    needed = _EXPECTED_FIELDS[kind] - 1
    start = 0
    if needed:
        delims = list(_DELIM_SPLIT.finditer(segment))
        if len(delims) >= needed:
            start = delims[needed - 1].end()
    strong = _CLOSE_STRONG.search(segment, start)
    if strong:
        return segment[: strong.end() - 1], True
    weak = _CLOSE_WEAK.search(segment, start)
    if weak:
        return segment[: weak.start()], True
    return segment, False


def _merge_quoted(fields: list[str], seps: list[str]) -> list[str]:
    """Re-join fields split inside a quoted value (``"a <|> b"``)."""
    out: list[str] = []
    i = 0
    while i < len(fields):
        cur = fields[i]
        s = cur.strip()
        if s[:1] in _OPEN_QUOTES and not (len(s) > 1 and s[-1] in _QUOTE_CHARS):
            j, merged = i + 1, cur
            while j < len(fields) and fields[j].strip()[:1] not in _OPEN_QUOTES:
                merged += seps[j - 1] + fields[j]
                if fields[j].strip()[-1:] in _QUOTE_CHARS:
                    out.append(merged)
                    i = j + 1
                    break
                j += 1
            else:
                out.append(cur)
                i += 1
            continue
        out.append(cur)
        i += 1
    return out


def _split_fields(body: str) -> list[str]:
    parts = _DELIM_SPLIT.split(body)
    fields, seps = parts[0::2], parts[1::2]
    return _merge_quoted(fields, seps)


def _strip_truncated_tail(fields: list[str], closed: bool) -> list[str]:
    """Drop the last field when the record was cut off inside it."""
    if closed or not fields:
        return fields
    last = fields[-1]
    if _quote_open(last) or not last.strip():
        return fields[:-1]
    if "\n" in last.strip():
        # Unquoted, unterminated: keep its first line only (prose may follow).
        return fields[:-1] + [last.strip().split("\n", 1)[0]]
    return fields


def _parse_weight(raw: str) -> float | None:
    match = _NUMBER.search(raw or "")
    if not match:
        return None
    try:
        value = float(match.group(0))
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def _make_entity(fields: list[str]) -> ExtractedEntity | None:
    if len(fields) < 2:
        return None
    name, etype = _clean_field(fields[0]), _clean_field(fields[1])
    if not name:
        return None
    desc = " <|> ".join(c for c in (_clean_field(f) for f in fields[2:]) if c)
    return ExtractedEntity(name=name, type=(etype or "UNKNOWN").upper(), description=desc.strip())


def _is_number(text: str) -> bool:
    return bool(_STRICT_NUMBER.fullmatch(text.strip()))


def _pop_weight(rest: list[str]) -> float | None:
    """Remove the strength field from ``rest`` (in place) and return its value."""
    if len(rest) >= 3:
        if not _is_number(rest[-1]) and _is_number(rest[-2]):  # keywords and strength swapped
            return _parse_weight(rest.pop(-2))
        return _parse_weight(rest.pop())
    if rest and _is_number(rest[-1]):
        return _parse_weight(rest.pop())
    return None


def _make_relation(fields: list[str]) -> ExtractedRelation | None:
    if len(fields) < 2:
        return None
    src, tgt = _clean_field(fields[0]), _clean_field(fields[1])
    if not src or not tgt:
        return None
    rest = [_clean_field(f) for f in fields[2:]]
    weight = _pop_weight(rest)
    keywords = rest.pop() if len(rest) >= 2 else ""
    desc = " <|> ".join(r for r in rest if r)
    return ExtractedRelation(
        source=src, target=tgt, description=desc, keywords=keywords, weight=1.0 if weight is None else weight
    )


def _split_keywords(raw: str) -> list[str]:
    return [k for k in (_clean_field(p) for p in re.split(r"[,;]", raw)) if k]


def _apply_record(kind: str, segment: str, result: ExtractionResult) -> bool:
    """Parse one record into ``result``; False if it could not be read."""
    body, closed = _record_end(segment, kind)
    fields = _strip_truncated_tail(_split_fields(body), closed)
    if kind == "content_keywords":
        words = [k for f in fields for k in _split_keywords(f)]
        result.content_keywords.extend(w for w in words if w not in result.content_keywords)
        return bool(words)
    if kind == "entity":
        entity = _make_entity(fields)
        if entity:
            result.entities.append(entity)
        return entity is not None
    relation = _make_relation(fields)
    if relation:
        result.relations.append(relation)
    return relation is not None


def _count_stray(text: str) -> int:
    """Record-like pieces of text outside any recognised record."""
    pieces = re.split(r"#{2,}|\n", text)
    return sum(1 for p in pieces if _RECORDISH.search(p) and re.search(r"\w", p))


def _parse_records(text: str) -> tuple[ExtractionResult, int]:
    """Parse record-format text; also return how many record starts were found."""
    result = ExtractionResult()
    starts = list(_RECORD_START.finditer(text))
    result.unparsed_records += _count_stray(text[: starts[0].start()] if starts else text)
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        segment = text[match.end() : end]
        try:
            ok = _apply_record(_kind_of(match.group(1)), segment, result)
        except Exception:  # noqa: BLE001 - a bad record must not sink the others
            logger.debug("record parser failed on %r", segment[:200], exc_info=True)
            ok = False
        if not ok:
            result.unparsed_records += 1
            logger.debug("unparsed record: %r", (match.group(0) + segment)[:200])
    return result, len(starts)


def _first(d: dict[str, Any], keys: Iterable[str]) -> Any:
    lowered = {str(k).lower(): v for k, v in d.items()}
    for key in keys:
        if key in lowered and lowered[key] not in (None, ""):
            return lowered[key]
    return None


_ENTITY_NAME_KEYS = ("entity_name", "name", "entity", "id", "title")
_ENTITY_TYPE_KEYS = ("entity_type", "type", "label", "category")
_DESC_KEYS = ("entity_description", "relationship_description", "description", "desc")
_SRC_KEYS = ("source_entity", "source", "src", "from", "head", "subject")
_TGT_KEYS = ("target_entity", "target", "tgt", "to", "tail", "object")
_KW_KEYS = ("relationship_keywords", "keywords", "relation", "label")
_W_KEYS = ("relationship_strength", "strength", "weight", "score")


def _json_entity(d: dict[str, Any]) -> ExtractedEntity | None:
    name = _clean_field(_as_str(_first(d, _ENTITY_NAME_KEYS)))
    if not name:
        return None
    etype = _clean_field(_as_str(_first(d, _ENTITY_TYPE_KEYS))) or "UNKNOWN"
    return ExtractedEntity(name=name, type=etype.upper(), description=_as_str(_first(d, _DESC_KEYS)).strip())


def _json_relation(d: dict[str, Any]) -> ExtractedRelation | None:
    src = _clean_field(_as_str(_first(d, _SRC_KEYS)))
    tgt = _clean_field(_as_str(_first(d, _TGT_KEYS)))
    if not src or not tgt:
        return None
    weight = _parse_weight(_as_str(_first(d, _W_KEYS)))
    return ExtractedRelation(
        source=src,
        target=tgt,
        description=_as_str(_first(d, _DESC_KEYS)).strip(),
        keywords=_as_str(_first(d, _KW_KEYS)).strip(),
        weight=1.0 if weight is None else weight,
    )


def _json_item(item: Any, result: ExtractionResult, hint: str | None) -> None:
    """Add one JSON item (dict or list-of-fields) to ``result``."""
    if isinstance(item, (list, tuple)) and item and isinstance(item[0], str):
        kind = item[0].strip().strip(_QUOTE_CHARS).lower()
        if kind in ("entity", "relationship", "relation", "content_keywords"):
            ok = _apply_record(_kind_of(kind), "<|>".join(_as_str(x) for x in item[1:]) + ")", result)
            result.unparsed_records += 0 if ok else 1
            return
    if not isinstance(item, dict):
        result.unparsed_records += 1
        return
    kind = _as_str(_first(item, ("record_type", "kind"))).lower() or (hint or "")
    is_rel = kind.startswith("relation") or (not kind and _first(item, _SRC_KEYS) is not None)
    parsed = _json_relation(item) if is_rel else _json_entity(item)
    if parsed is None:
        result.unparsed_records += 1
    elif isinstance(parsed, ExtractedRelation):
        result.relations.append(parsed)
    else:
        result.entities.append(parsed)


def _parse_json(text: str) -> ExtractionResult | None:
    """Parse a JSON reply (repaired); None if it holds nothing recognisable."""
    if len(text) > _MAX_JSON_CHARS or not re.search(r"[\[{]", text):
        return None
    try:
        data = json_repair.loads(text[re.search(r"[\[{]", text).start() :])
    except Exception:  # noqa: BLE001 - json_repair may fail on pathological input
        logger.debug("json_repair failed", exc_info=True)
        return None
    result = ExtractionResult()
    if isinstance(data, dict):
        for key, hint in (("entities", "entity"), ("nodes", "entity"), ("relationships", "relationship"),
                          ("relations", "relationship"), ("edges", "relationship")):
            items = data.get(key)
            if isinstance(items, list):
                for item in items:
                    _json_item(item, result, hint)
        keywords = data.get("content_keywords") or data.get("keywords")
        if keywords:
            result.content_keywords = _split_keywords(_as_str(keywords))
        if not (result.entities or result.relations) and any(k in data for k in ("entity_name", "name")):
            _json_item(data, result, None)
    elif isinstance(data, list):
        for item in data:
            _json_item(item, result, None)
    if not (result.entities or result.relations or result.content_keywords):
        return None
    return result


def parse_extraction(text: str | bytes) -> ExtractionResult:
    """Parse a model's entity_extraction reply; never raises.

    Accepts MiniRAG's record format with any of the usual defects, or JSON.
    Unreadable records are counted in ``unparsed_records``.
    """
    try:
        raw = _clean_markup(_to_text(text))
        result, n_starts = _parse_records(raw)
        if n_starts == 0:
            json_result = _parse_json(raw)
            if json_result is not None:
                result = json_result
        if result.unparsed_records:
            logger.info("extraction reply: %d record(s) could not be parsed", result.unparsed_records)
        return result
    except Exception:  # noqa: BLE001 - the contract is: never raise
        logger.warning("extraction reply could not be parsed at all", exc_info=True)
        return ExtractionResult(unparsed_records=1)


__all__ = ["parse_extraction"]
