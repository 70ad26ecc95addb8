"""The per-chunk records of an entity or relation and the bounded tally its merged attributes
derive from (Sec. 3.1: an entity or edge seen in many chunks is one node or edge).

Every chunk that mentions an entity (or states a relation) leaves a record under the item's
``sources``: the name, type and description it gave (for a relation: weight, keywords and
description). The merged attributes are a function of the set of records, kept in a small
``tally`` that a record updates without reading the others: name and type counts, the weight
as an exact integer, keyword counts and the first ``MAX_MERGED_DESCRIPTIONS`` distinct
descriptions in chunk order. So adding a chunk to an entity seen in thousands costs what the
chunk brings, and a store may hand out an item with only some of its records (``partial``):
the rest are read through the working graph's ``source_loader`` only when a removal needs them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable, Mapping

from minirag_core.types import UNKNOWN_TYPE, is_known_type

ENTITY, RELATION = "entity", "relation"
DESCRIPTION_SEPARATOR = " | "
#: distinct descriptions a merged description keeps (the first ones in chunk order); an entity's
#: vector embeds its name and a relation's only the start of its description, so the bound
#: changes what is shown and put in a prompt, not what is retrieved
MAX_MERGED_DESCRIPTIONS = 8
#: weights are summed as integers in millionths, so the sum does not depend on the order
WEIGHT_SCALE = 1_000_000
#: the chunk ids removed from a partially loaded item's ``sources`` in this write
PARTIAL = "partial_sources"
#: ``graph.graph[SOURCE_LOADER](kind, key)``: every stored record of an entity (key: its id)
#: or relation (key: ``(u, v)``), set by stores whose working graph holds partial items
SOURCE_LOADER = "source_loader"

#: ``graph.graph[ITEM_LOADER](kind, key)``: the stored attributes of an entity or relation the
#: working graph does not hold (partial, no records), or None if there is none
ITEM_LOADER = "item_loader"

#: ``graph.graph[CHUNK_LOADER](chunk_ids)``: adds stored chunks (with their mentions, relations
#: and entities) to a working graph that lacks them
CHUNK_LOADER = "chunk_loader"



def empty_tally(kind: str) -> dict[str, Any]:
    if kind == ENTITY:
        return {"n": 0, "names": {}, "alias_names": {}, "types": {}, "alias_types": {}, "heads": []}
    return {"n": 0, "weight": 0, "keywords": {}, "heads": []}


def _copied(tally: dict[str, Any]) -> dict[str, Any]:
    """A copy whose containers can be changed (items may share a tally with a snapshot)."""
    return {k: dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v for k, v in tally.items()}


def _count(counts: dict[str, int], key: str, delta: int) -> None:
    value = counts.get(key, 0) + delta
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)


def _keywords(record: dict[str, Any]) -> set[str]:
    return {k.strip() for k in str(record.get("keywords", "")).split(",") if k.strip()}


def _counted(tally: dict[str, Any], kind: str, record: dict[str, Any], delta: int) -> None:
    tally["n"] += delta
    if kind == ENTITY:
        alias = "raw" in record
        _count(tally["alias_names" if alias else "names"], record["name"], delta)
        if record.get("type"):
            _count(tally["alias_types" if alias else "types"], record["type"], delta)
    else:
        tally["weight"] += delta * round(float(record["weight"]) * WEIGHT_SCALE)
        for keyword in _keywords(record):
            _count(tally["keywords"], keyword, delta)


def _with_head(heads: list[list[str]], chunk_id: str, description: str) -> list[list[str]]:
    """The first distinct descriptions in chunk order once ``chunk_id``'s is added to them."""
    if not description:
        return heads
    for other, text in heads:
        if text == description:
            if other <= chunk_id:
                return heads
            heads = [h for h in heads if h[0] != other]
            break
    return sorted(heads + [[chunk_id, description]])[:MAX_MERGED_DESCRIPTIONS]


def first_descriptions(sources: Mapping[str, dict[str, Any]]) -> list[list[str]]:
    """The first ``MAX_MERGED_DESCRIPTIONS`` distinct descriptions of complete records, with their chunks."""
    heads: list[list[str]] = []
    seen: set[str] = set()
    for chunk_id in sorted(sources):
        description = sources[chunk_id].get("description", "")
        if description and description not in seen:
            seen.add(description)
            heads.append([chunk_id, description])
            if len(heads) == MAX_MERGED_DESCRIPTIONS:
                break
    return heads


def tally_of(kind: str, sources: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The tally of a complete set of records."""
    tally = empty_tally(kind)
    for record in sources.values():
        _counted(tally, kind, record, 1)
    tally["heads"] = first_descriptions(sources)
    return tally


def _most_common(counts: Mapping[str, int]) -> str | None:
    return min(counts, key=lambda k: (-counts[k], k)) if counts else None


def merged_view(kind: str, tally: dict[str, Any]) -> dict[str, Any]:
    """An entity's display name, type and description, or a relation's weight, description and
    keywords (the name as the records under the node's own id give it, not an alias homed there)."""
    description = DESCRIPTION_SEPARATOR.join(text for _, text in tally["heads"])
    if kind == ENTITY:
        types = Counter(tally["types"]) + Counter(tally["alias_types"])
        known = Counter({t: n for t, n in types.items() if is_known_type(t)})  # a type any record gives wins
        return {"name": _most_common(tally["names"]) or _most_common(tally["alias_names"]) or "",
                "type": _most_common(known) or UNKNOWN_TYPE, "description": description}
    return {"weight": tally["weight"] / WEIGHT_SCALE, "description": description,
            "keywords": ", ".join(sorted(tally["keywords"]))}


def own_type(attrs: dict[str, Any], without: Iterable[dict[str, Any]] = ()) -> str | None:
    """The majority type of the records an entity holds under its own id (aliases excluded),
    optionally as it was before the records ``without`` were added."""
    types = Counter(attrs["tally"]["types"]) - Counter(r["type"] for r in without if "raw" not in r and r.get("type"))
    return _most_common(types)


def holds_aliases(attrs: dict[str, Any]) -> bool:
    """Whether records of other ids (short forms) are homed at this entity."""
    return bool(attrs["tally"]["alias_names"])


def record_count(attrs: dict[str, Any]) -> int:
    return int(attrs["tally"]["n"])


def new_item(kind: str) -> dict[str, Any]:
    """The attributes of an entity or relation without records (``add_record`` fills them)."""
    return {"kind": kind, "sources": {}, "tally": empty_tally(kind)}


def add_record(attrs: dict[str, Any], chunk_id: str, record: dict[str, Any],
               loader: Callable[[], None] | None = None) -> None:
    """Add (or replace) one chunk's record and derive the merged attributes again."""
    if chunk_id in attrs["sources"]:
        drop_record(attrs, chunk_id, loader)
    kind = attrs["kind"]
    tally = _copied(attrs["tally"])
    _counted(tally, kind, record, 1)
    tally["heads"] = _with_head(tally["heads"], chunk_id, record.get("description", ""))
    attrs["sources"][chunk_id] = record
    if PARTIAL in attrs and chunk_id in attrs[PARTIAL]:
        attrs[PARTIAL] = [c for c in attrs[PARTIAL] if c != chunk_id]
    attrs["tally"] = tally
    attrs.update(merged_view(kind, tally))


def drop_record(attrs: dict[str, Any], chunk_id: str, loader: Callable[[], None] | None = None) -> dict[str, Any]:
    """Remove one chunk's record (it must be loaded) and derive the merged attributes again;
    if its description was a shown one, the others are read (``loader`` completes a partial item)."""
    kind = attrs["kind"]
    record = attrs["sources"].pop(chunk_id)
    tally = _copied(attrs["tally"])
    _counted(tally, kind, record, -1)
    if PARTIAL in attrs:
        attrs[PARTIAL] = [*attrs[PARTIAL], chunk_id]
    if any(head[0] == chunk_id for head in tally["heads"]):
        if PARTIAL in attrs:
            if loader is None:
                raise RuntimeError("a partially loaded graph item needs its other records, and no loader was given")
            loader()
        tally["heads"] = first_descriptions(attrs["sources"])
    attrs["tally"] = tally
    attrs.update(merged_view(kind, tally))
    return record


def complete_sources(attrs: dict[str, Any], stored: Mapping[str, dict[str, Any]]) -> None:
    """Fill a partial item's ``sources`` with its ``stored`` records, except those this write removed."""
    if PARTIAL not in attrs:
        return
    removed = set(attrs.pop(PARTIAL))
    for chunk_id, record in stored.items():
        if chunk_id not in removed and chunk_id not in attrs["sources"]:
            attrs["sources"][chunk_id] = record


def ensure_tally(attrs: dict[str, Any]) -> dict[str, Any]:
    """Give an entity or relation written before tallies existed its tally (from its complete
    records); returns ``attrs``."""
    kind = attrs.get("kind")
    if kind in (ENTITY, RELATION) and "tally" not in attrs and "sources" in attrs:
        attrs.pop("source_chunks", None)
        attrs["tally"] = tally_of(kind, attrs["sources"])
        attrs.update(merged_view(kind, attrs["tally"]))
    return attrs
