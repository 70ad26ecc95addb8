"""Lines a conversation has already sent in full (``retrieval/session.py`` keeps them per session).

A passage sent in full for the first time shows each block of lines that a passage above it sent
in full, in the same order (an earlier turn's passage, or one above it in the same context), as a
marker naming that passage: ``[4 lines as in passage 3 above]``. Nothing is lost: every block
left out stands, whole, in the passage its marker names, so the text the model has read over the
conversation is the same. Only hashes of lines are kept, never text; a block repeated inside one
passage stays as it is.
"""

from __future__ import annotations

import hashlib
import re
from typing import Collection, Mapping, Sequence

__all__ = ["MIN_RUN_CHARS", "SentLines", "line_key", "repeat_marker"]

#: a run of repeated lines shorter than this (characters, blank lines aside) stays in full: its
#: marker would cost about as many tokens as the run
MIN_RUN_CHARS = 40


#: what a marker line holds instead of a hash: no block of a later passage matches it
MARKER_KEY = "marker"
_MARKER = re.compile(r"\[\d+ lines? as in passage \d+ above\]")


def line_key(line: str) -> str:
    """A line's hash (trailing whitespace aside; indentation counts)."""
    return hashlib.sha256(line.rstrip().encode("utf-8")).hexdigest()[:16]


def repeat_marker(passage: int, lines: int) -> str:
    """What stands for a block of ``lines`` lines that passage ``passage`` sent in full."""
    return f"[{lines} {'line' if lines == 1 else 'lines'} as in passage {passage} above]"


class SentLines:
    """The line hashes of the passages sent in full, in order (blank lines aside), per passage."""

    def __init__(self, passages: Mapping[int, Sequence[str]] | None = None, min_run_chars: int = MIN_RUN_CHARS) -> None:
        self.passages: dict[int, list[str]] = {int(p): list(keys) for p, keys in (passages or {}).items()}
        self.min_run_chars = min_run_chars
        self._where: dict[str, list[tuple[int, int]]] = {}  # line hash -> (passage, place in its lines)
        for passage, keys in self.passages.items():
            self._index(passage, keys)

    def _index(self, passage: int, keys: Sequence[str]) -> None:
        for place, key in enumerate(keys):
            self._where.setdefault(key, []).append((passage, place))

    def _block(self, lines: Sequence[str], keys: Sequence[str | None], start: int) -> tuple[int, int, int]:
        """The longest block from line ``start`` on that an earlier passage holds in the same order:
        (its end, the passage, its characters); blank lines inside it go with it."""
        best = (start, 0, 0)
        for passage, place in self._where.get(keys[start] or "", []):
            sent, at, end, chars = self.passages[passage], start, start, 0
            while at < len(keys) and place < len(sent):
                if keys[at] is None:
                    at += 1
                    continue
                if keys[at] != sent[place]:
                    break
                chars += len(lines[at].strip())
                at, place, end = at + 1, place + 1, at + 1
            if chars > best[2]:
                best = (end, passage, chars)
        return best

    def shown(self, text: str) -> str:
        """``text`` with every block of lines an earlier passage sent in the same order (at least
        :data:`min_run_chars` long) replaced by a marker naming that passage."""
        lines = text.split("\n")
        keys = [line_key(line) if line.strip() else None for line in lines]
        out: list[str] = []
        at = 0
        while at < len(lines):
            end, passage, chars = self._block(lines, keys, at) if keys[at] else (at, 0, 0)
            if chars >= self.min_run_chars:
                out.append(repeat_marker(passage, sum(k is not None for k in keys[at:end])))
                at = end
            else:
                out.append(lines[at])
                at += 1
        return "\n".join(out)

    def add(self, shown: str, passage: int) -> None:
        """Record the lines ``passage`` sent in full (``shown``: its text as sent; its markers
        match nothing, so a later marker always names a passage that sent the block itself)."""
        keys = [MARKER_KEY if _MARKER.fullmatch(line.strip()) else line_key(line)
                for line in shown.split("\n") if line.strip()]
        self.passages[passage] = keys
        self._index(passage, keys)

    def forget(self, kept: Collection[int]) -> None:
        """Drop the lines of passages no longer kept (a later repeat of them is sent in full)."""
        self.passages = {p: keys for p, keys in self.passages.items() if p in kept}
        self._where = {}
        for passage, keys in self.passages.items():
            self._index(passage, keys)
