"""LlamaIndex ``MetadataFilters`` as the core's metadata filter (``minirag_core.retrieval.filters``).

Operators ``==``, ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in``, ``nin``, ``contains``, ``any`` and
``all`` are read, conditions ``and``, ``or`` and ``not`` (none of the filters holds), nested
``MetadataFilters`` too; the text-match and ``is_empty`` operators are refused with a clear error.
"""

from __future__ import annotations

from typing import Any, Mapping, Union

from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

from minirag_core.retrieval.filters import AllOf, AnyOf, Condition, FilterError, Not, all_of, as_filter
from minirag_core.retrieval.filters import MetadataFilter as CoreFilter

__all__ = ["to_core_filter", "LlamaFilterInput"]

_SAME = {FilterOperator.EQ: "eq", FilterOperator.NE: "ne", FilterOperator.GT: "gt", FilterOperator.GTE: "gte",
         FilterOperator.LT: "lt", FilterOperator.LTE: "lte", FilterOperator.IN: "in", FilterOperator.NIN: "nin",
         FilterOperator.CONTAINS: "contains"}

#: what the LlamaIndex retrievers take as ``filters=``
LlamaFilterInput = Union[MetadataFilters, MetadataFilter, Mapping[str, Any], None]


def _condition(item: MetadataFilter) -> CoreFilter:
    op, value = FilterOperator(item.operator), item.value
    if op in _SAME:
        return Condition(item.key, _SAME[op], value)
    if op in (FilterOperator.ANY, FilterOperator.ALL):
        if not isinstance(value, (list, tuple)) or not value:
            raise FilterError(f"{op.value!r} on {item.key!r} needs a non-empty list of values, got {value!r}")
        parts = tuple(Condition(item.key, "contains", v) for v in value)
        return parts[0] if len(parts) == 1 else (AnyOf(parts) if op == FilterOperator.ANY else AllOf(parts))
    raise FilterError(f"filter operator {op.value!r} on {item.key!r} is not supported; use ==, !=, >, >=, <, <=, "
                      "in, nin, contains, any or all")


def _filters(filters: MetadataFilters) -> CoreFilter:
    parts = tuple(_filters(f) if isinstance(f, MetadataFilters) else _condition(f) for f in filters.filters)
    if not parts:
        raise FilterError("MetadataFilters holds no filter; pass filters=None for none")
    condition = FilterCondition(filters.condition or FilterCondition.AND)
    if condition == FilterCondition.AND:
        return all_of(parts)
    either = parts[0] if len(parts) == 1 else AnyOf(parts)
    return either if condition == FilterCondition.OR else Not(either)


def to_core_filter(filters: LlamaFilterInput) -> CoreFilter | None:
    """The core filter of LlamaIndex ``MetadataFilters`` (or one ``MetadataFilter``); a filter
    dict or core filter passes through ``as_filter``."""
    if isinstance(filters, MetadataFilters):
        return _filters(filters)
    if isinstance(filters, MetadataFilter):
        return _condition(filters)
    return as_filter(filters)
