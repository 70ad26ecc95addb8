"""The answer prompt's context: a retrieval result rendered as MiniRAG's CSV-like data tables."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence


class RenderableResult(Protocol):
    """What the tables are drawn from: a ``RetrievalResult``'s chunks and graph evidence."""

    chunks: Sequence[Any]
    answer_candidates: Sequence[str]
    key_edges: Sequence[Any]

    def ranked_paths(self) -> Sequence[Any]:
        """The reasoning paths, each once, strongest first."""


def _csv_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    for row in rows:
        writer.writerow(row)
    return buf.getvalue().rstrip("\n")


def section(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    return f"-----{title}-----\n```csv\n{_csv_table(header, rows)}\n```"


#: graph rows (answer candidates, key relationships, reasoning paths) rendered per section
CONTEXT_ROWS = 10


def _touching(rows: list, nodes_of, relevant: set[str], limit: int) -> list:
    """The rows that touch an entity of the chosen chunks (all rows when no chunk names its
    entities), at most ``limit``, in the given (best-first) order."""
    kept = [r for r in rows if not relevant or relevant & set(nodes_of(r))]
    return kept[:limit]


@dataclass
class ContextRows:
    """The graph rows a context shows: answer candidates, key edges and reasoning paths."""

    candidates: list[str] = field(default_factory=list)
    edges: list[Any] = field(default_factory=list)
    paths: list[Any] = field(default_factory=list)


def select_rows(result: RenderableResult, max_rows: int = CONTEXT_ROWS) -> ContextRows:
    """The graph rows :func:`render_context` shows: those touching an entity of the chosen chunks
    (a path nobody can read evidence for is noise to a small model), at most ``max_rows`` each."""
    relevant = {e for c in result.chunks for e in c.entities}
    return ContextRows(
        _touching(list(result.answer_candidates), lambda name: [name], relevant, max_rows),
        _touching(sorted(result.key_edges, key=lambda e: -e.score), lambda e: [e.source, e.target], relevant, max_rows),
        _touching(list(result.ranked_paths()), lambda p: p.nodes, relevant, max_rows))


def render_rows(rows: ContextRows, source_rows: Sequence[Sequence[object]], extra: Sequence[str] = ()) -> str:
    """The data tables: ``rows``' non-empty sections, then ``extra`` sections, then Sources
    (``source_rows``: id, doc_id, score, content), which is always present."""
    parts: list[str] = []
    if rows.candidates:
        parts.append(section("Answer Candidates", ("id", "entity"), list(enumerate(rows.candidates))))
    if rows.edges:
        table = [(i, e.source, e.target, e.description, e.keywords, f"{e.score:.4f}") for i, e in enumerate(rows.edges)]
        parts.append(
            section("Key Relationships", ("id", "source", "target", "description", "keywords", "score"), table)
        )
    if rows.paths:
        table = [(i, p.query_entity, " -> ".join(p.nodes), f"{p.weighted_score:.4f}") for i, p in enumerate(rows.paths)]
        parts.append(section("Reasoning Paths", ("id", "query_entity", "path", "score"), table))
    parts.extend(extra)
    parts.append(section("Sources", ("id", "doc_id", "score", "content"), source_rows))
    return "\n\n".join(parts)


def render_context(result: RenderableResult, max_rows: int = CONTEXT_ROWS) -> str:
    """Render a retrieval result as the CSV-like data tables of the answer prompt.

    Sections: Answer Candidates, Key Relationships, Reasoning Paths (strongest first, with the
    score they are ordered by; :func:`select_rows` picks them) and Sources (the chunks, each with
    its doc id). With aggregated evidence, its candidates, paths, Clusters and Cluster Relations
    take the graph sections' place. Empty sections are left out, except Sources, which is always present.
    """
    rows = [(i, c.doc_id, f"{c.score:.4f}", c.text) for i, c in enumerate(result.chunks)]
    aggregated = getattr(result, "aggregated", None)
    if aggregated is not None:  # the clusters' summaries and the paths inside them replace the graph rows
        relevant = {e for c in result.chunks for e in c.entities}
        inside = ContextRows(_touching(list(aggregated.candidates), lambda name: [name], relevant, max_rows), [],
                             _touching(list(aggregated.paths), lambda p: p.nodes, relevant, max_rows))
        return render_rows(inside, rows, aggregated_sections(aggregated))
    return render_rows(select_rows(result, max_rows), rows)


def aggregated_sections(aggregated: Any) -> list[str]:
    """The Clusters and Cluster Relations tables of an ``AggregatedEvidence``."""
    labels = {c.id: " / ".join(c.entities[:3]) for c in aggregated.clusters}
    parts = [section("Clusters", ("id", "level", "entities", "summary"),
                     [(i, c.level, labels[c.id], c.summary) for i, c in enumerate(aggregated.clusters)])]
    if aggregated.relations:
        parts.append(section("Cluster Relations", ("source", "target", "relations", "example"),
                             [(labels.get(r["source"], r["source"]), labels.get(r["target"], r["target"]),
                               r["strength"], r["example"]) for r in aggregated.relations]))
    return parts
