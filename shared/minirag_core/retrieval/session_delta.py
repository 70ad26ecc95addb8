"""What a conversation's follow-up turn sends the model: the chunks it admits and the graph rows
that are new to it (``retrieval/session.py`` keeps the state).

A follow-up ranks twice as deep as its ``top_k`` and keeps, best first, up to ``top_k`` chunks:

- a chunk sent in an earlier turn costs a reference only, so it keeps its place;
- a chunk not sent before is admitted only while the evidence it adds is not already covered: its
  score is at least ``admit_ratio`` times the turn's best score (the best may be a chunk the model
  has already read, which then raises the bar for new text), and at most ``new_chunks`` are new.

Graph rows (answer candidates, key relationships, reasoning paths) are sent once: a row an earlier
turn sent, or a path all of whose steps it sent, is left out; with ``rows_of_new_chunks`` a
follow-up sends only the rows touching an entity of a chunk it sends in full (the rows about
passages sent before were the earlier turns' to send).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Container, Mapping, Sequence

from minirag_core.context import ContextRows
from minirag_core.types import ScoredChunk

__all__ = ["Admission", "edge_key", "path_steps", "row_keys", "unsent_rows"]


@dataclass(frozen=True)
class Admission:
    """How a follow-up admits chunks not sent before (``None``: no bound of that kind)."""

    new_chunks: int | None = None
    admit_ratio: float | None = None

    def __post_init__(self) -> None:
        if self.new_chunks is not None and self.new_chunks < 0:
            raise ValueError("new_chunks must be at least 0")
        if self.admit_ratio is not None and not 0.0 <= self.admit_ratio <= 1.0:
            raise ValueError("admit_ratio must be between 0 and 1")

    @property
    def bounded(self) -> bool:
        """Whether a follow-up may pass over new chunks (and so ranks deeper than its top_k)."""
        return self.new_chunks is not None or self.admit_ratio is not None

    def select(self, chunks: Sequence[ScoredChunk], sent: Container[str], k: int) -> list[ScoredChunk]:
        """The best ``k`` of ``chunks`` (best first) a follow-up keeps: every chunk of ``sent``,
        and a new one while it passes the count and relevance bounds."""
        if not self.bounded:
            return list(chunks[:k])
        best = max((c.score for c in chunks), default=0.0)
        floor = self.admit_ratio * best if self.admit_ratio is not None and best > 0 else float("-inf")
        kept: list[ScoredChunk] = []
        new = 0
        for chunk in chunks:
            if len(kept) == k:
                break
            if chunk.chunk_id in sent:
                kept.append(chunk)
            elif chunk.score >= floor and (self.new_chunks is None or new < self.new_chunks):
                kept.append(chunk)
                new += 1
        return kept


def edge_key(u: str, v: str) -> tuple[str, ...]:
    return ("edge", min(u, v), max(u, v))


def path_steps(path: Any) -> list[tuple[str, ...]]:
    """A path's entity pairs (a one-entity path, a bridge: that entity from its start)."""
    if len(path.nodes) < 2:
        return [("path", path.query_entity, *path.nodes)]
    return [edge_key(u, v) for u, v in zip(path.nodes, path.nodes[1:])]


def row_keys(rows: ContextRows) -> list[tuple[str, ...]]:
    """What a context's graph rows told the model: its candidates, and every entity pair a key
    relationship or a path joined."""
    return ([("candidate", c) for c in rows.candidates] + [edge_key(e.source, e.target) for e in rows.edges]
            + [k for p in rows.paths for k in path_steps(p)])


def unsent_rows(shown: ContextRows, sent: Mapping[tuple[str, ...], int],
                touching: set[str] | None = None) -> ContextRows:
    """The rows of ``shown`` no earlier turn sent (``sent``: row keys), and with ``touching``
    only those naming one of its entities."""
    def near(nodes: Sequence[str]) -> bool:
        return touching is None or bool(touching.intersection(nodes))

    return ContextRows(
        [c for c in shown.candidates if ("candidate", c) not in sent and near([c])],
        [e for e in shown.edges if edge_key(e.source, e.target) not in sent and near([e.source, e.target])],
        [p for p in shown.paths if not all(k in sent for k in path_steps(p)) and near(p.nodes)])
