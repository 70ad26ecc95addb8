"""Four variants of ``bridging.bridge_scores`` measured on the tune halves (none adopted).

Run from the repository root after ``benchmarks/quality/run_suite.py`` has built its indexes:
``.venv/bin/python benchmarks/experiments/tried/bridge_variants.py '{"seed_frontier": [0.5, 1.0]}'``.
Each grid key is one variant (0 = off, the library's behaviour):

- ``seed_frontier``: chunks about a query entity (reached in the seed step) also lead on, at
  this share of their seed similarity, so a chain that starts at the question's entity continues.
- ``entity_frontier``: for each seed entity, its most query-relevant linked chunk joins the
  chunks followed, at this share of its relevance (two branches of a question both lead on).
- ``gated_mentions``: first-step bridges also reach chunks that merely *mention* a bridge entity
  named in 2..``mention_max_chunks`` chunks, weighted by this share x the target's own relevance.
- ``entity_specificity``: each bridge is weighted by the bridge entity's specificity
  (``residual.link_specificity``) to this power.
- ``targets_per_source``: each source chunk leads only to its this many most query-relevant
  targets (0 = all), so a passage naming many entities spreads its score less widely.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

sys.path.insert(0, str(Path(__file__).resolve().parent))

import minirag_core.retrieval.modes.mini as mini  # noqa: E402
from minirag_core.retrieval.extensions.bridging import Bridge  # noqa: E402
from minirag_core.retrieval.extensions.residual import link_specificity  # noqa: E402
from minirag_core.scores import top_ids  # noqa: E402
from tune_rows import print_tune_rows  # noqa: E402

VARIANT = {"seed_frontier": 0.0, "entity_frontier": 0.0, "gated_mentions": 0.0, "mention_max_chunks": 10,
           "entity_specificity": 0.0, "targets_per_source": 0}
OPTION = dict(VARIANT)


def bridge_scores(graph, relevance, seeds, *, seed_chunks, steps, damping):
    """``bridging.bridge_scores`` with the variants of ``OPTION`` (all 0: the same results)."""
    top = [(c, relevance[c]) for c in top_ids(relevance, seed_chunks)]
    peak = top[0][1] if top and top[0][1] > 0 else 1.0
    frontier = {c: s / peak for c, s in top}
    scores, bridges = {}, []
    for entity, chunks in graph.subject_chunks(sorted(seeds)).items():
        for chunk in chunks:
            if seeds[entity] > scores.get(chunk, 0.0):
                scores[chunk] = seeds[entity]
                bridges.append(Bridge(entity, entity, chunk, seeds[entity]))
    if OPTION["seed_frontier"]:
        for chunk, value in scores.items():
            frontier[chunk] = max(frontier.get(chunk, 0.0), OPTION["seed_frontier"] * value)
    if OPTION["entity_frontier"]:
        for entity, chunks in graph.entity_chunk_ids(sorted(seeds)).items():
            if chunks:
                best = max(chunks, key=lambda c: relevance.get(c, 0.0))
                share = OPTION["entity_frontier"] * max(0.0, relevance.get(best, 0.0)) / peak
                frontier[best] = max(frontier.get(best, 0.0), share)
    total = len(graph.chunk_ids())
    for step in range(steps):
        mentions = graph.chunk_entities(sorted(frontier))
        named = sorted({e for es in mentions.values() for e in es})
        subjects = graph.subject_chunks(named)
        mentioned = graph.entity_chunk_ids(named)
        reached = {}
        keep = None
        if OPTION["targets_per_source"]:
            keep = {}
            for source, entities in mentions.items():
                targets = {t for e in entities for t in subjects.get(e, ()) if t != source}
                keep[source] = set(sorted(targets, key=lambda t: (-relevance.get(t, 0.0), t))[:OPTION["targets_per_source"]])
        for source, entities in mentions.items():
            for entity in entities:
                links = [(t, 1.0) for t in subjects.get(entity, ())]
                if OPTION["gated_mentions"] and step == 0 and 1 < len(mentioned.get(entity, ())) <= OPTION["mention_max_chunks"]:
                    links += [(t, OPTION["gated_mentions"] * max(0.0, relevance.get(t, 0.0)) / peak)
                              for t in mentioned[entity] if t not in subjects.get(entity, ())]
                for target, share in links:
                    if keep is not None and target not in keep[source]:
                        continue
                    value = frontier[source] * damping * share
                    if OPTION["entity_specificity"]:
                        value *= link_specificity(len(mentioned.get(entity, ())), total) ** OPTION["entity_specificity"]
                    if target != source and value > max(scores.get(target, 0.0), reached.get(target, 0.0)):
                        reached[target] = value
                        bridges.append(Bridge(source, entity, target, value))
        scores.update({c: max(v, scores.get(c, 0.0)) for c, v in reached.items()})
        frontier = reached
        if not frontier:
            break
    best = {}
    for bridge in bridges:
        if bridge.target not in best or bridge.score > best[bridge.target].score:
            best[bridge.target] = bridge
    return scores, sorted(best.values(), key=lambda b: (-b.score, b.target))


def main() -> None:
    mini.bridge_scores = bridge_scores

    def rank(index, question, setting, _):
        OPTION.clear()
        OPTION.update(VARIANT, **setting)
        return index.query(question.question, mode="mini", top_k=10, token_budget=10**9).chunks

    print_tune_rows(json.loads(sys.argv[1]), rank)


if __name__ == "__main__":
    main()
