"""Bridge entities: reach a chunk that shares few words with the question but is one entity
away from a chunk that does ("the director of film X" -> the passage about that director).

The most query-relevant chunks (and the query's own seed entities) pass their relevance along
the entities they mention to the chunks *about* those entities (their subjects: a passage's
title, a section's heading), for ``steps`` steps, damped each step. Every bridge is kept as an
explanation: (from chunk or query entity, bridge entity, reached chunk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from minirag_core.scores import top_ids
from minirag_core.storage.base import GraphView
from minirag_core.types import BRIDGE_LABEL_PREFIX


@dataclass(frozen=True)
class Bridge:
    source: str      # a chunk id, or the seed entity (matched from the query) itself
    entity: str      # the bridge entity (id)
    target: str      # the chunk reached
    score: float


EntityWeights = Callable[[Iterable[str]], Mapping[str, float]]


def bridge_scores(graph: GraphView, relevance: Mapping[str, float], seeds: dict[str, float], *,
                  seed_chunks: int, steps: int, damping: float,
                  entity_weight: EntityWeights | None = None,
                  max_frontier: int = 0) -> tuple[dict[str, float], list[Bridge]]:
    """Bridge score per reached chunk (max over the ways to reach it) and, per reached chunk, the
    strongest bridge that reached it. ``entity_weight`` (0-1 per entity; 1 where absent) scales
    what passes through each bridge entity: a hub that many chunks mention carries little.
    ``max_frontier`` (0: no bound) keeps only the strongest chunks reached by a step as the
    next step's sources."""
    top = [(c, relevance[c]) for c in top_ids(relevance, seed_chunks)]
    peak = top[0][1] if top and top[0][1] > 0 else 1.0
    frontier = {c: s / peak for c, s in top}
    scores: dict[str, float] = {}
    bridges: list[Bridge] = []

    def weights_of(entities: Iterable[str]) -> Mapping[str, float]:
        return entity_weight(entities) if entity_weight is not None else {}

    seed_subjects = graph.subject_chunks(sorted(seeds))
    seed_weight = weights_of(seed_subjects)
    for entity, chunks in seed_subjects.items():  # the query names a subject
        value = seeds[entity] * seed_weight.get(entity, 1.0)
        for chunk in chunks:
            if value > scores.get(chunk, 0.0):
                scores[chunk] = value
                bridges.append(Bridge(entity, entity, chunk, value))
    for _ in range(steps):
        mentions = graph.chunk_entities(sorted(frontier))
        subjects = graph.subject_chunks(sorted({e for es in mentions.values() for e in es}))
        weight = weights_of(subjects)
        reached: dict[str, float] = {}
        for source, entities in mentions.items():
            for entity in entities:
                for target in subjects.get(entity, ()):
                    value = frontier[source] * damping * weight.get(entity, 1.0)
                    if target != source and value > max(scores.get(target, 0.0), reached.get(target, 0.0)):
                        reached[target] = value
                        bridges.append(Bridge(source, entity, target, value))
        scores.update({c: max(v, scores.get(c, 0.0)) for c, v in reached.items()})
        frontier = {c: reached[c] for c in top_ids(reached, max_frontier)} if max_frontier > 0 else reached
        if not frontier:
            break
    best: dict[str, Bridge] = {}
    for bridge in bridges:  # the strongest way to each reached chunk explains it
        if bridge.target not in best or bridge.score > best[bridge.target].score:
            best[bridge.target] = bridge
    return scores, sorted(best.values(), key=lambda b: (-b.score, b.target))


def bridge_label(bridge: Bridge, doc_ids: dict[str, str]) -> str:
    """Where a bridge starts, for explanations: the query's entity or the document of the chunk
    that mentions the bridge entity (never the chunk's internal id, which means nothing to a reader)."""
    if bridge.source == bridge.entity:
        return f"{BRIDGE_LABEL_PREFIX}query entity {bridge.entity}"
    doc_id = doc_ids.get(bridge.source)
    if not doc_id or doc_id == bridge.source:  # a chunk no longer in the graph has no document to name
        return f"{BRIDGE_LABEL_PREFIX}another passage"
    return f"{BRIDGE_LABEL_PREFIX}{doc_id}"
