"""Where each chunk lies in its document: character offsets found as the chunks are made, so a
hit can be cited (``document.text[start:end] == chunk.text``, exactly, not stripped)."""

from __future__ import annotations

#: characters a piece may start past the end of the previous one (blank lines between blocks);
#: bounds the search, so a piece that is not in the text costs no scan of the rest of a long document
SLACK = 4096


class OffsetFinder:
    """Places a document's pieces, given in document order, in its text: each one is looked for
    from just after where the previous one starts (windows overlap, blocks follow each other) to
    shortly after where it ends. A piece that is not a slice of the text there (an embedder that
    rejoins words) gets no place rather than a wrong one."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._from = self._end = 0

    def place(self, piece: str) -> tuple[int | None, int | None]:
        """``(start, end)`` of ``piece`` in the text, or ``(None, None)`` if it is not there."""
        if not piece:
            return None, None
        start = self.text.find(piece, self._from, max(self._end, self._from) + len(piece) + SLACK)
        if start == -1:
            return None, None
        self._from, self._end = start + 1, start + len(piece)
        return start, self._end
