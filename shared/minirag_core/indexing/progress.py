"""Progress of an insert that tells the truth: characters and documents of the documents being
indexed, each with its own rate and ETA, never past their totals (chunks overlap, so summing
chunk lengths would overshoot)."""

from __future__ import annotations

from typing import Any, Sequence

from tqdm.auto import tqdm

from minirag_core.types import Chunk, Document


class InsertProgress:
    """Two bars, characters and documents; ``update`` after each written batch."""

    def __init__(self, documents: Sequence[Document], enabled: bool) -> None:
        self.enabled = enabled
        self._length = {d.id: len(d.text) for d in documents}
        self._done: dict[str, int] = {}
        self.chars_done = self.documents_done = 0
        total = sum(self._length.values())
        self.chars = tqdm(total=total, unit="char", unit_scale=True, desc="indexing", disable=not enabled,
                          position=0, smoothing=0.1)
        self.documents = tqdm(total=len(self._length), unit="doc", desc="documents", disable=not enabled,
                              position=1, smoothing=0.1)

    def update(self, batch: Sequence[tuple[Document, Any, list[Chunk], bool]]) -> None:
        """A batch of (document, digest, chunks, complete) is written: a complete document counts
        whole, a piece of a long one by its chunks' characters (capped below the document's length)."""
        chars = finished = 0
        for document, _, chunks, complete in batch:
            length = self._length.get(document.id, len(document.text))
            before = self._done.get(document.id, 0)
            after = length if complete else min(length - 1, before + sum(len(c.text) for c in chunks))
            self._done[document.id] = max(before, after)
            chars += self._done[document.id] - before
            finished += 1 if complete else 0
        self.chars_done += chars
        self.documents_done += finished
        self.chars.update(chars)
        self.documents.update(finished)

    def close(self) -> None:
        self.chars.close()
        self.documents.close()
