"""The answer prompt's context: a retrieval result rendered as MiniRAG's CSV-like data tables."""

from __future__ import annotations

import csv
import io
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


def _section(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    return f"-----{title}-----\n```csv\n{_csv_table(header, rows)}\n```"


#: graph rows (answer candidates, key relationships, reasoning paths) rendered per section
CONTEXT_ROWS = 10


def _touching(rows: list, nodes_of, relevant: set[str], limit: int) -> list:
    """The rows that touch an entity of the chosen chunks (all rows when no chunk names its
    entities), at most ``limit``, in the given (best-first) order."""
    kept = [r for r in rows if not relevant or relevant & set(nodes_of(r))]
    return kept[:limit]


def render_context(result: RenderableResult, max_rows: int = CONTEXT_ROWS) -> str:
    """Render a retrieval result as the CSV-like data tables of the answer prompt.

    Sections: Answer Candidates, Key Relationships, Reasoning Paths (strongest first, with the
    score they are ordered by) and Sources (the chunks, each with its doc id). Graph rows are kept
    only when they touch an entity of the chosen chunks (a path nobody can read evidence for is
    noise to a small model), at most ``max_rows`` each. Empty sections are left out, except
    Sources, which is always present.
    """
    relevant = {e for c in result.chunks for e in c.entities}
    parts: list[str] = []
    candidates = _touching(list(result.answer_candidates), lambda name: [name], relevant, max_rows)
    if candidates:
        parts.append(_section("Answer Candidates", ("id", "entity"), list(enumerate(candidates))))
    edges = _touching(sorted(result.key_edges, key=lambda e: -e.score), lambda e: [e.source, e.target],
                      relevant, max_rows)
    if edges:
        rows = [(i, e.source, e.target, e.description, e.keywords, f"{e.score:.4f}") for i, e in enumerate(edges)]
        parts.append(
            _section("Key Relationships", ("id", "source", "target", "description", "keywords", "score"), rows)
        )
    paths = _touching(list(result.ranked_paths()), lambda p: p.nodes, relevant, max_rows)
    if paths:
        rows = [(i, p.query_entity, " -> ".join(p.nodes), f"{p.weighted_score:.4f}") for i, p in enumerate(paths)]
        parts.append(_section("Reasoning Paths", ("id", "query_entity", "path", "score"), rows))
    rows = [(i, c.doc_id, f"{c.score:.4f}", c.text) for i, c in enumerate(result.chunks)]
    parts.append(_section("Sources", ("id", "doc_id", "score", "content"), rows))
    return "\n\n".join(parts)
