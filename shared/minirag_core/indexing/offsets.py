"""Where each chunk lies in its document: character offsets found as the chunks are made, so a
hit can be cited (``document.text[start:end] == chunk.text``, exactly, not stripped)."""

from __future__ import annotations


class OffsetFinder:
    """Places a document's pieces, given in document order, in its text: each one is looked for
    from just after where the previous one starts (windows overlap, blocks follow each other).
    A piece that is not a slice of the text (an embedder that rejoins words) gets no place."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._from = 0

    def place(self, piece: str) -> tuple[int | None, int | None]:
        """``(start, end)`` of ``piece`` in the text, or ``(None, None)`` if it is not there."""
        start = self.text.find(piece, self._from)
        if start == -1 or not piece:
            return None, None
        self._from = start + 1
        return start, start + len(piece)
