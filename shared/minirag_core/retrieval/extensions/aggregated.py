"""LeanRAG's bottom-up retrieval over the entity graph's aggregation (``graph/aggregation.py``),
an option of mini mode (``RetrievalSettings.aggregate``).

The query's fine-grained entities (its strongest seeds) are the anchors; for each pair, the
clusters from each anchor up to their lowest common ancestor are taken (an anchor no other shares
a cluster with brings its own lowest cluster). The evidence is those clusters' summaries, the
relations between them, and the reasoning paths and answer candidates that stay inside them (a
path whose entities another kept path already holds is left out): a compact, non-redundant set
the context shows instead of the key-relationship and path tables (a summary sentence a lower
cluster already gave is not repeated). Only clusters holding an entity of the chosen chunks are shown (as the plain context keeps only
graph rows touching them). The chunks are not changed.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Callable, Protocol

from minirag_core.graph.aggregation import Aggregation, Cluster
from minirag_core.llm.base import LLMBackend
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.storage.base import GraphView
from minirag_core.types import AggregatedEvidence, ClusterSummary, RetrievalResult

SUMMARY_WORDS = 30
SUMMARY_PROMPT = ("In one sentence of at most {words} words, say what connects these entities, using only "
                  "their descriptions.\n{entities}\nSentence:")
NO_AGGREGATION_NOTE = "aggregation asked for, but these sources keep no aggregation: graph rows shown as usual"


class AggregatedSources(Protocol):
    """Sources that keep an aggregation of their entity graph (``CoreSources`` does)."""

    graph: GraphView

    def aggregation(self) -> Aggregation: ...

    def cluster_summary(self, cluster: Cluster) -> str: ...


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


def cluster_summary(graph: GraphView, cluster: Cluster, llm: LLMBackend | None = None) -> str:
    """A cluster's summary: without a model, the first sentences of its main entities'
    descriptions (extractive, at most :data:`SUMMARY_WORDS` words); with one, its sentence."""
    found = {e: graph.entity(e) or {} for e in cluster.hubs}
    if llm is not None:
        listed = "\n".join(f"- {a.get('name', e)}: {_words(str(a.get('description', '')), 40)}" for e, a in found.items())
        return _words(llm.complete(SUMMARY_PROMPT.format(words=SUMMARY_WORDS, entities=listed)).strip(), SUMMARY_WORDS)
    sentences = [_first_sentence(str(a.get("description", ""))) for a in found.values()]
    return _words(" ".join(dict.fromkeys(s for s in sentences if s)), SUMMARY_WORDS)


def _unsaid(summary: str, said: set[str]) -> str:
    """``summary`` less the sentences a lower cluster's summary already gave (they are added to ``said``)."""
    sentences = [x for x in re.split(r"(?<=[.!?])\s+", summary) if x]
    fresh = [x for x in sentences if x not in said]
    said.update(fresh)
    return " ".join(fresh)


def lca_clusters(aggregation: Aggregation, anchors: list[str]) -> list[str]:
    """The clusters on the paths from each pair of anchors up to their lowest common ancestor;
    an anchor sharing no cluster with another brings its lowest cluster. Lowest level first."""
    chosen: dict[str, None] = {}
    paired: set[str] = set()
    for a, b in combinations(anchors, 2):
        top = aggregation.lowest_common_ancestor(a, b)
        if top is None:
            continue
        paired.update((a, b))
        for anchor in (a, b):
            for cluster in aggregation.ancestors(anchor):
                chosen[cluster] = None
                if cluster == top:
                    break
    for anchor in anchors:
        if anchor not in paired and anchor in aggregation.parent:
            chosen[aggregation.parent[anchor]] = None
    order = list(chosen)
    return sorted(order, key=lambda c: (aggregation.clusters[c].level, order.index(c)))


def aggregated_evidence(sources: AggregatedSources, result: RetrievalResult,
                        settings: RetrievalSettings) -> AggregatedEvidence:
    """LeanRAG's evidence for ``result`` (see the module's docstring)."""
    aggregation = sources.aggregation()
    anchors = sorted(result.seeds, key=lambda s: (-result.seeds[s], s))[: settings.aggregate_anchors]
    linked = {e for c in result.chunks for e in c.entities}  # a cluster no chosen chunk speaks of is noise
    reached = lca_clusters(aggregation, anchors)
    chosen = [c for c in reached if not linked or linked & set(aggregation.clusters[c].entities)]
    chosen = chosen[: settings.aggregate_clusters]
    inside = {e for c in chosen for e in aggregation.clusters[c].entities} | set(anchors)
    paths = []
    for path in result.ranked_paths():
        nodes = set(path.nodes)
        if nodes <= inside and not any(nodes <= set(p.nodes) for p in paths):
            paths.append(path)
        if len(paths) >= settings.aggregate_paths:
            break
    picked = set(chosen)
    relations = [{"source": r.source, "target": r.target, "strength": r.strength,
                  "example": " - ".join(r.examples[0]) if r.examples else ""}
                 for r in aggregation.relations if r.source in picked and r.target in picked]
    relations.sort(key=lambda r: -r["strength"])
    name: Callable[[str], str] = lambda e: str((sources.graph.entity(e) or {}).get("name", e))  # noqa: E731
    said: set[str] = set()
    clusters = [ClusterSummary(c, aggregation.clusters[c].level, [name(e) for e in aggregation.clusters[c].hubs],
                               _unsaid(sources.cluster_summary(aggregation.clusters[c]), said),
                               list(aggregation.clusters[c].hubs))
                for c in chosen]
    return AggregatedEvidence(anchors=anchors, clusters=clusters, relations=relations[: settings.aggregate_paths],
                              paths=paths, candidates=[c for c in result.answer_candidates if c in inside][:5])


def with_aggregation(sources: object, result: RetrievalResult, settings: RetrievalSettings) -> RetrievalResult:
    """``result`` with its aggregated evidence, or a note where ``sources`` keep no aggregation."""
    if not hasattr(sources, "aggregation"):
        result.notes.append(NO_AGGREGATION_NOTE)
    else:
        result.aggregated = aggregated_evidence(sources, result, settings)  # type: ignore[arg-type]
    return result
