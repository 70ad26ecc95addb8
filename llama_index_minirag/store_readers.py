"""The reader of a ``PropertyGraphStore``: which :class:`~llama_index_minirag.store_access.StoreAccess`
reads what its ``get_triplets`` omits (the in-memory store's, FalkorDB's or Ladybug's)."""

from __future__ import annotations

from llama_index.core.graph_stores.types import PropertyGraphStore

from .extractor import MENTIONED_IN, RELATED
from .ladybug_access import LadybugAccess
from .store_access import FalkorDBAccess, StoreAccess

__all__ = ["access_for"]


def access_for(store: PropertyGraphStore, mention_label: str = MENTIONED_IN,
               relation_label: str = RELATED) -> StoreAccess:
    """The reader for ``store``'s kind (by its class, without importing optional packages)."""
    kinds = {cls.__name__ for cls in type(store).__mro__}
    if "FalkorDBPropertyGraphStore" in kinds:
        return FalkorDBAccess(store, mention_label, relation_label)
    if "LadybugPropertyGraphStore" in kinds:
        return LadybugAccess(store, mention_label, relation_label)
    return StoreAccess(store, mention_label, relation_label)
