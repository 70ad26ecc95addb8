"""Lines a conversation has already sent in full (``retrieval/session.py`` keeps them per session).

A passage sent in full for the first time shows each run of lines that a passage above it sent in
full (an earlier turn's, or one above it in the same context) as a marker naming that passage:
``[lines as in passage 3 above]``. Nothing is lost: every line left out stands in full in the
passage its marker names, so the text the model has read over the conversation is the same. Only
hashes of lines are kept, never text; lines repeated inside one passage stay as they are.
"""

from __future__ import annotations

import hashlib
from typing import Collection, Mapping

__all__ = ["MIN_RUN_CHARS", "SentLines", "line_key", "repeat_marker"]

#: a run of repeated lines shorter than this (characters, blank lines aside) stays in full: its
#: marker would cost about as many tokens as the run
MIN_RUN_CHARS = 40


def line_key(line: str) -> str:
    """A line's hash (surrounding whitespace aside)."""
    return hashlib.sha256(line.strip().encode("utf-8")).hexdigest()[:16]


def repeat_marker(passages: Collection[int]) -> str:
    """What stands for a run of lines the passages ``passages`` sent in full."""
    numbers = sorted(set(passages))
    label = "passage" if len(numbers) == 1 else "passages"
    return f"[lines as in {label} {', '.join(map(str, numbers))} above]"


class SentLines:
    """The hashes of the non-blank lines sent in full, each with the first passage that sent it."""

    def __init__(self, lines: Mapping[str, int] | None = None, min_run_chars: int = MIN_RUN_CHARS) -> None:
        self.lines: dict[str, int] = dict(lines or {})
        self.min_run_chars = min_run_chars

    def shown(self, text: str) -> str:
        """``text`` with every run of lines sent before (at least :data:`min_run_chars` long)
        replaced by a marker; blank lines inside a run go with it, those around it stay."""
        out: list[str] = []
        run: list[str] = []
        where: set[int] = set()

        def close() -> None:
            trailing = []
            while run and not run[-1].strip():
                trailing.append(run.pop())
            if sum(len(line.strip()) for line in run) >= self.min_run_chars:
                out.append(repeat_marker(where))
            else:
                out.extend(run)
            out.extend(reversed(trailing))
            run.clear()
            where.clear()

        for line in text.split("\n"):
            passage = self.lines.get(line_key(line)) if line.strip() else None
            if passage is not None:
                run.append(line)
                where.add(passage)
            elif run and not line.strip():
                run.append(line)
            else:
                close()
                out.append(line)
        close()
        return "\n".join(out)

    def add(self, text: str, passage: int) -> None:
        """Record ``text``'s lines as sent in full by ``passage`` (a line sent before keeps its first passage)."""
        for line in text.split("\n"):
            if line.strip():
                self.lines.setdefault(line_key(line), passage)

    def forget(self, kept: Collection[int]) -> None:
        """Drop the lines of passages no longer kept (a later repeat of them is sent in full)."""
        self.lines = {key: passage for key, passage in self.lines.items() if passage in kept}
