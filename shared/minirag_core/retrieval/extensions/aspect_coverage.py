"""The top chunks cover the question's entities between them, not one entity five times over.

A question naming several entities ("the rail link between Alderton and the town where Mara
Quill was born") asks about each of them; a ranking by relevance alone can fill
every slot with passages on the entity that dominates the question's words. The head of the
ranking is re-ordered greedily, as in aspect-based diversification (xQuAD): the most relevant
chunk keeps the first place, and each next pick is the chunk whose score plus a bonus for the
question entities it names *that no earlier pick named* is highest. A question with fewer than
two entities is left as it is.

A chunk names a question entity when its text does (whole words) or when the graph links it to
an entity node the question entity was matched to (a speaker tag "JaneDoe:" names "Jane" through
the node JANE DOE, though the text never says "Jane").
"""

from __future__ import annotations

import math
import re
from typing import Iterable, Mapping, Sequence


def named_aspects(aspects: Sequence[str], texts: Mapping[str, str]) -> dict[str, frozenset[int]]:
    """For each chunk, the indices of the ``aspects`` (stripped names) its text names (whole
    words, any case)."""
    words = [a.lower() for a in aspects]
    patterns: dict[int, re.Pattern[str]] = {}  # compiled when a text first holds the aspect

    def names(i: int, text: str) -> bool:
        if i not in patterns:
            patterns[i] = re.compile(r"(?<!\w)" + re.escape(aspects[i]) + r"(?!\w)", re.IGNORECASE)
        return patterns[i].search(text) is not None

    out = {}
    for chunk, text in texts.items():
        folded = text.lower()  # a substring test first: most chunks name few of the aspects
        out[chunk] = frozenset(i for i, word in enumerate(words) if word in folded and names(i, text))
    return out


def linked_aspects(aspects: Sequence[str], matches: Mapping[str, Iterable[str]],
                   chunk_entities: Mapping[str, Iterable[str]]) -> dict[str, frozenset[int]]:
    """For each chunk, the indices of the ``aspects`` it is linked to in the graph: ``matches``
    maps a question entity to the entity nodes it was matched to (its seeds)."""
    nodes = [frozenset(matches.get(a, ())) for a in aspects]
    linked = {c: set(entities) for c, entities in chunk_entities.items()}
    return {c: frozenset(i for i, found in enumerate(nodes) if found & entities) for c, entities in linked.items()}


def merge_named(*named: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """Per chunk, the union of the aspects each source says it names."""
    merged: dict[str, frozenset[int]] = {}
    for table in named:
        for chunk, found in table.items():
            merged[chunk] = merged.get(chunk, frozenset()) | found
    return merged


def cover_aspects(ranked: list[tuple[str, float]], named: Mapping[str, frozenset[int]], n_aspects: int,
                  weight: float, depth: int) -> list[tuple[str, float]]:
    """``ranked`` with its first ``depth`` chunks re-ordered: the first stays, each next pick
    maximises its score plus ``weight`` x (the head's best score) x (share of the aspects it
    newly names). Scores become those picking values, each capped just below the pick before
    it, so the ranking stays strictly sorted (a consumer that sorts by score keeps the order)."""
    head, tail = ranked[:depth], ranked[depth:]
    if n_aspects < 2 or weight <= 0 or len(head) < 2:
        return ranked
    scale = weight * max(head[0][1], 0.0) / n_aspects
    chosen: list[tuple[str, float]] = [head[0]]  # the most relevant chunk keeps the first place
    covered: frozenset[int] = named.get(head[0][0], frozenset())
    remaining = list(head[1:])
    while remaining:
        values = [score + scale * len(named.get(chunk, frozenset()) - covered) for chunk, score in remaining]
        best = max(range(len(remaining)), key=lambda i: (values[i], -i))  # ties keep the original order
        chunk, _ = remaining.pop(best)
        chosen.append((chunk, min(values[best], math.nextafter(chosen[-1][1], -math.inf))))
        covered |= named.get(chunk, frozenset())
    return chosen + tail
