"""Alias consolidation across chunks and documents: one node for a person named in full
("Ada Lovelace") and by the short forms that abbreviate it elsewhere ("Lovelace", "A. Lovelace").

Conservative: a short form (a lone name, or initials and a name) of a PERSON record joins the
full name only when exactly one PERSON node of the graph has that surname and those initials;
with two ("Chidi Okafor", "Ngozi Okafor") "Okafor" stays its own node. Nothing is rewritten: a
chunk's record of the short form keeps its original id (``raw``) and is only *homed* at the
full name's node, together with its mention edge and the chunk's relations through it. After
every insert or delete the homes of the short forms the change can affect are recomputed, so
the graph stays a function of the chunks it holds (deleting the document that named someone in
full sends the short forms back to their own nodes, as if it had never been inserted).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import networkx as nx

from minirag_core.graph.heterogeneous import (ENTITY, MENTION, add_entity_record, add_relation_record, complete_item,
                    drop_entity_record, drop_relation_record, ensure_chunks)
from minirag_core.graph.records import holds_aliases, own_type, record_count

PERSON = "PERSON"
_INITIAL = re.compile(r"^[^\W\d_]\.?$")
_WORD = re.compile(r"^[^\W\d_][^\W\d_'’\-]+$")


@dataclass
class AliasMoves:
    """What a consolidation changed: entity ids, relation edges, mention edges, chunk ids."""

    entities: set[str] = field(default_factory=set)
    edges: set[tuple[str, str]] = field(default_factory=set)
    mentions: set[tuple[str, str]] = field(default_factory=set)
    chunks: set[str] = field(default_factory=set)


def short_form(node_id: str) -> tuple[tuple[str, ...], str] | None:
    """``(initials, surname)`` of a lone name (``MESSI``) or initials and a name (``L. MESSI``)."""
    parts = node_id.split()
    if not parts or not _WORD.match(parts[-1]) or not all(_INITIAL.match(p) for p in parts[:-1]):
        return None
    return tuple(p[0] for p in parts[:-1]), parts[-1]


def full_form(node_id: str) -> str | None:
    """The surname of a full name (two or more words, not just initials and a name)."""
    parts = node_id.split()
    if len(parts) < 2 or short_form(node_id) is not None or not _WORD.match(parts[-1]):
        return None
    return parts[-1]


def _abbreviates(initials: tuple[str, ...], full: str) -> bool:
    parts = full.split()
    return len(initials) < len(parts) and all(parts[i][0] == c for i, c in enumerate(initials))


#: a removal's full-name changes are not worked out: every short form of the surname is re-homed
EVERY = None


@dataclass(frozen=True)
class FullNameChange:
    """The person full names of one surname that a write made (``made``) or unmade (``unmade``)."""

    made: frozenset[str]
    unmade: frozenset[str]


def full_name_changes(graph: nx.Graph, touched: Iterable[str],
                      new_chunks: set[str]) -> dict[str, FullNameChange | None]:
    """Per surname, the full names the write made or unmade (a person's, by its own records);
    ``EVERY`` for a removal's surnames (any full name it touched). Under any other surname the
    full names are as before, so a short form's home stays and only the write's new records need one."""
    made: dict[str, set[str]] = {}
    unmade: dict[str, set[str]] = {}
    removal: set[str] = set()
    for entity_id in touched:
        surname = full_form(entity_id)
        if not surname:
            continue
        if not new_chunks or not graph.has_node(entity_id):
            removal.add(surname)
            continue
        attrs = graph.nodes[entity_id]
        added = [r for c, r in attrs["sources"].items() if c in new_chunks]
        was_full = record_count(attrs) > len(added) and own_type(attrs, added) == PERSON
        is_full = own_type(attrs) == PERSON
        if was_full != is_full:
            (made if is_full else unmade).setdefault(surname, set()).add(entity_id)
    changes: dict[str, FullNameChange | None] = {
        s: FullNameChange(frozenset(made.get(s, ())), frozenset(unmade.get(s, ()))) for s in {*made, *unmade}}
    changes.update(dict.fromkeys(removal, EVERY))
    return changes


class _Homes:
    """Which short forms a write can re-home: those whose initials match a different set of full
    names than before, where the match was or becomes unique (a short form is homed at its one
    matching full name, else stays apart: from two matches to three nothing moves)."""

    def __init__(self, changes: dict[str, FullNameChange | None], fulls: dict[str, list[str]]) -> None:
        self.changes = changes
        self.fulls = fulls
        self._known: dict[tuple[str, tuple[str, ...]], bool] = {}  # a common surname has many holders

    def affected(self, surname: str, initials: tuple[str, ...]) -> bool:
        if surname not in self.changes:
            return False
        change = self.changes[surname]
        if change is EVERY:
            return True
        known = self._known.get((surname, initials))
        if known is None:
            now = {f for f in self.fulls.get(surname, ()) if _abbreviates(initials, f)}
            before = (now - change.made) | {f for f in change.unmade if _abbreviates(initials, f)}
            known = self._known[surname, initials] = now != before and (len(now) == 1 or len(before) == 1)
        return known

    def all_records(self, home: str) -> bool:
        """Whether any record at ``home`` may move: its own short form is affected, or (a full
        name) a short form it can hold is (records are homed only at the one full name they abbreviate)."""
        parts = home.split()
        form = short_form(home)
        if form is not None:
            return self.affected(form[1], form[0])
        return any(self.affected(parts[-1], tuple(p[0] for p in parts[:k])) for k in range(len(parts)))


def consolidate(graph: nx.Graph, touched: Iterable[str], new_chunks: Iterable[str] = ()) -> AliasMoves:
    """Re-home the short-form records whose surname is that of a ``touched`` entity id: those of
    ``new_chunks`` (the write's added chunks), and every record of a short form whose full-name
    match the write changed, with the rest of those records' chunks (a chunk's short forms are homed together)."""
    touched = list(touched)
    surnames = {t.split()[-1] for t in touched if t.strip()}
    new = set(new_chunks)
    moves = AliasMoves()
    if not surnames:
        return moves
    holders: list[str] = []
    fulls: dict[str, list[str]] = {}
    for node_id, attrs in graph.nodes(data=True):
        if attrs.get("kind") != ENTITY or node_id.split()[-1] not in surnames:
            continue
        holders.append(node_id)
        surname = full_form(node_id)
        if surname and own_type(attrs) == PERSON:
            fulls.setdefault(surname, []).append(node_id)
    homes = _Homes(full_name_changes(graph, touched, new), fulls)
    holders = [h for h in holders if may_home_short_forms(h, graph.nodes[h])]
    chunks = set(new)
    for home in holders:
        if homes.all_records(home):
            chunks.update(complete_item(graph, ENTITY, home)["sources"])
    ensure_chunks(graph, chunks)  # a store's working graph may lack them (and their other records)
    units: list[tuple[str, str, str, str]] = []  # (chunk, raw id, home now, home wanted)
    for home in holders:
        for chunk_id, record in graph.nodes[home]["sources"].items():
            if chunk_id not in chunks:
                continue
            raw = record.get("raw", home)
            form = short_form(raw)
            if form is None or record["type"] != PERSON:
                continue
            initials, surname = form
            found = [f for f in fulls.get(surname, ()) if _abbreviates(initials, f)]
            units.append((chunk_id, raw, home, found[0] if len(found) == 1 else raw))
    claims = Counter((c, want) for c, raw, _, want in units if want != raw)
    for c, raw, home, want in units:
        if want != raw:
            own = graph.nodes[want]["sources"].get(c)
            if claims[c, want] > 1 or (own is not None and own.get("raw", want) == want):
                want = raw  # the chunk names two people this way, or the full name itself: keep apart
        if want != home:
            _move(graph, c, raw, home, want, moves)
    return moves


def may_home_short_forms(node_id: str, attrs: dict[str, Any]) -> bool:
    """Whether any of the entity's records is a person's short form (what consolidation moves):
    it holds aliases, or it is a short form with person records. Only such an entity's records
    are all read, so a hub ("2013", "Song") costs a write no more than the chunks it brings."""
    return holds_aliases(attrs) or (short_form(node_id) is not None and PERSON in attrs["tally"]["types"])


def _move(graph: nx.Graph, chunk_id: str, raw: str, src: str, dst: str, moves: AliasMoves) -> None:
    """Move one chunk's record of ``raw`` (with its mention and relations) from ``src`` to ``dst``."""
    record = dict(drop_entity_record(graph, src, chunk_id))
    if dst == raw:
        record.pop("raw", None)
    else:
        record["raw"] = raw
    add_entity_record(graph, dst, chunk_id, record)
    description = graph.edges[src, chunk_id].get("description", "")
    graph.remove_edge(src, chunk_id)
    graph.add_edge(dst, chunk_id, kind=MENTION, description=description)
    moves.mentions |= {(min(src, chunk_id), max(src, chunk_id)), (min(dst, chunk_id), max(dst, chunk_id))}
    chunk = graph.nodes[chunk_id]
    relations = []
    for s, t in chunk["relations"]:
        if src not in (s, t):
            relations.append([s, t])
            continue
        other = t if s == src else s
        relation = drop_relation_record(graph, (s, t), chunk_id)
        key = (min(dst, other), max(dst, other))
        add_relation_record(graph, key, chunk_id, relation)
        relations.append(list(key))
        moves.edges |= {(s, t), key}
        moves.entities.add(other)
    chunk["relations"] = relations
    chunk["subjects"] = sorted(dst if s == src else s for s in chunk.get("subjects", []))
    if record_count(graph.nodes[src]) == 0:
        graph.remove_node(src)
    moves.entities |= {src, dst}
    moves.chunks.add(chunk_id)


def alias_surname(node_id: str, attrs: dict[str, Any]) -> str | None:
    """The surname under which alias consolidation must see this entity, if it can matter
    there: a short-form id, a holder of short forms homed at it, or a person's full name."""
    if short_form(node_id) is not None or holds_aliases(attrs):
        return node_id.split()[-1]
    if full_form(node_id) and own_type(attrs) == PERSON:
        return node_id.split()[-1]
    return None


def consolidate_for_store(store: object, graph: nx.Graph, entity_ids: Iterable[str],
                          new_chunks: Iterable[str] = ()) -> AliasMoves:
    """:func:`consolidate` where ``graph`` holds every entity it reads: the networkx store's
    whole graph, or the SQLite store's working graph (which loads the entities of each touched
    surname); a FalkorDB working graph holds only what a write touches, so there aliases stay
    apart."""
    if not (getattr(store, "holds_whole_graph", False) or getattr(store, "loads_alias_neighbourhood", False)):
        return AliasMoves()
    return consolidate(graph, entity_ids, new_chunks)
