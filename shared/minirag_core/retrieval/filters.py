"""Metadata filters: one small typed tree over document metadata, read from the filter dict of
LangChain vector stores (``{"key": value}``, ``{"key": {"$in": [...]}}``, ``{"$and": [...]}``)
or from ``key=value`` pairs; the LlamaIndex adapter translates ``MetadataFilters`` into it.

A key the metadata lacks (or holds as None) equals nothing: ``ne`` and ``nin`` hold for it and
every other operator fails (as LlamaIndex's own metadata filtering reads it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from numbers import Real
from typing import Any, Iterable, Mapping, Union

#: operators of a condition: equality, membership, ranges, and ``contains`` (a list value holds it)
OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains")
_RANGES = ("gt", "gte", "lt", "lte")
_SCALAR = (str, int, float, bool)


class FilterError(ValueError):
    """A filter that cannot be read: the message says which part and why."""


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _comparable(a: Any, b: Any) -> bool:
    """Both numbers, or both strings (a range between a number and a string holds for nothing)."""
    return (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str))


def _equal(a: Any, b: Any) -> bool:
    """Equal as metadata values: 1 == 1.0, but True is not 1 and "1" is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return _comparable(a, b) and a == b


@dataclass(frozen=True)
class Condition:
    """``metadata[key] <op> value``."""

    key: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise FilterError(f"a filter key must be a non-empty string, got {self.key!r}")
        if self.op not in OPERATORS:
            raise FilterError(f"unknown filter operator {self.op!r} on {self.key!r}; use one of {', '.join(OPERATORS)}")
        if self.op in ("in", "nin"):
            if not isinstance(self.value, (list, tuple)) or not self.value:
                raise FilterError(f"{self.op!r} on {self.key!r} needs a non-empty list of values, got {self.value!r}")
            if not all(isinstance(v, _SCALAR) for v in self.value):
                raise FilterError(f"{self.op!r} on {self.key!r} takes strings, numbers or booleans, got {self.value!r}")
            object.__setattr__(self, "value", tuple(self.value))
        elif self.op in _RANGES:
            if not (_is_number(self.value) or isinstance(self.value, str)):
                raise FilterError(f"{self.op!r} on {self.key!r} compares with a number or a string, got {self.value!r}")
        elif not isinstance(self.value, _SCALAR):
            raise FilterError(f"{self.op!r} on {self.key!r} takes a string, number or boolean, got {self.value!r}")

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        found, op, value = metadata.get(self.key), self.op, self.value
        if found is None:
            return op in ("ne", "nin")
        if op == "eq":
            return _equal(found, value)
        if op == "ne":
            return not _equal(found, value)
        if op == "in":
            return any(_equal(found, v) for v in value)
        if op == "nin":
            return not any(_equal(found, v) for v in value)
        if op == "contains":
            return isinstance(found, (list, tuple)) and any(_equal(f, value) for f in found)
        if not _comparable(found, value):
            return False
        return {"gt": found > value, "gte": found >= value, "lt": found < value, "lte": found <= value}[op]


@dataclass(frozen=True)
class AllOf:
    """Every part holds (``and``)."""

    parts: tuple["MetadataFilter", ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        return all(p.matches(metadata) for p in self.parts)


@dataclass(frozen=True)
class AnyOf:
    """At least one part holds (``or``)."""

    parts: tuple["MetadataFilter", ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        return any(p.matches(metadata) for p in self.parts)


@dataclass(frozen=True)
class Not:
    """The part does not hold."""

    part: "MetadataFilter"

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        return not self.part.matches(metadata)


MetadataFilter = Union[Condition, AllOf, AnyOf, Not]
#: what the surfaces accept: a core filter, a filter dict, or nothing
FilterInput = Union[MetadataFilter, Mapping[str, Any], None]


def all_of(parts: Iterable[MetadataFilter]) -> MetadataFilter:
    """``and`` of ``parts`` (the one part itself when there is one)."""
    parts = tuple(parts)
    if not parts:
        raise FilterError("an 'and' or 'or' filter needs at least one part")
    return parts[0] if len(parts) == 1 else AllOf(parts)


def _group(op: str, value: Any) -> MetadataFilter:
    if not isinstance(value, (list, tuple)) or not value:
        raise FilterError(f"{op!r} needs a non-empty list of filters, got {value!r}")
    parts = tuple(from_dict(v) for v in value)
    return all_of(parts) if op == "$and" else (parts[0] if len(parts) == 1 else AnyOf(parts))


def from_dict(spec: Mapping[str, Any]) -> MetadataFilter:
    """The LangChain / Chroma filter dict as a filter: ``{"key": value}`` (equality),
    ``{"key": {"$gte": 2, "$lt": 5}}`` (every operator given holds), ``{"$and": [...]}``,
    ``{"$or": [...]}``, ``{"$not": {...}}``; several keys in one dict must all hold."""
    if not isinstance(spec, Mapping):
        raise FilterError(f"a filter must be a dict, got {type(spec).__name__}: {spec!r}")
    if not spec:
        raise FilterError("an empty filter dict selects nothing in particular; pass None for no filter")
    parts: list[MetadataFilter] = []
    for key, value in spec.items():
        if key in ("$and", "$or"):
            parts.append(_group(key, value))
        elif key == "$not":
            parts.append(Not(from_dict(value)))
        elif isinstance(key, str) and key.startswith("$"):
            raise FilterError(f"unknown filter operator {key!r}; a top-level operator is $and, $or or $not")
        elif isinstance(value, Mapping):
            if not value:
                raise FilterError(f"no operator given for {key!r}")
            for op, operand in value.items():
                if not isinstance(op, str) or not op.startswith("$"):
                    raise FilterError(f"operators on {key!r} start with '$' ($eq, $in, $gte, ...), got {op!r}")
                parts.append(Condition(key, op[1:], operand))
        else:
            parts.append(Condition(key, "eq", value))
    return all_of(parts)


def from_where_args(pairs: Iterable[str]) -> MetadataFilter | None:
    """``key=value`` pairs (all must hold), as ``minirag query --where`` takes them: a value
    that reads as JSON (``2020``, ``true``) also matches that number or boolean."""
    parts: list[MetadataFilter] = []
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise FilterError(f"--where takes key=value, got {pair!r}")
        key = key.strip()
        try:
            typed = json.loads(raw)
        except ValueError:
            typed = raw
        if isinstance(typed, _SCALAR) and not isinstance(typed, str):
            parts.append(AnyOf((Condition(key, "eq", raw), Condition(key, "eq", typed))))
        else:
            parts.append(Condition(key, "eq", raw))
    return all_of(parts) if parts else None


def as_filter(value: FilterInput) -> MetadataFilter | None:
    """A core filter from what a surface was given (a core filter, a filter dict or None)."""
    if value is None or isinstance(value, (Condition, AllOf, AnyOf, Not)):
        return value
    if isinstance(value, Mapping):
        return from_dict(value)
    raise FilterError(f"a filter is a dict such as {{'year': {{'$gte': 2020}}}} or a core filter, "
                      f"got {type(value).__name__}")


@dataclass(frozen=True)
class Passing:
    """What a filter lets through: the passing documents' ids and their chunks' ids."""

    documents: frozenset[str]
    chunks: frozenset[str]


def passing(metadata_filter: MetadataFilter,
            documents: Iterable[tuple[str, Mapping[str, Any], Iterable[str]]]) -> Passing:
    """The documents (``(doc id, metadata, chunk ids)``) whose metadata pass, with their chunks."""
    kept = [(d, chunks) for d, metadata, chunks in documents if metadata_filter.matches(metadata or {})]
    return Passing(frozenset(d for d, _ in kept), frozenset(c for _, chunks in kept for c in chunks))
