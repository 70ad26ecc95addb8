"""The indexing progress bar, in characters of the documents: chunks overlap, so each document
advances the bar by its own length at most and reaches it exactly when its last chunk is saved."""

from __future__ import annotations

from tqdm.auto import tqdm


class DocumentProgress:
    """A ``tqdm`` bar over the given total of characters that never passes it."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self.bar = tqdm(total=total, unit="char", unit_scale=True, desc="indexing", disable=not enabled)
        self._done: dict[str, int] = {}

    def advance(self, doc_id: str, doc_chars: int, chunk_chars: int, complete: bool) -> None:
        """Count ``chunk_chars`` more of a document of ``doc_chars`` (all of it once ``complete``)."""
        done = self._done.get(doc_id, 0)
        target = doc_chars if complete else min(doc_chars - 1, done + chunk_chars)
        if target > done:
            self.bar.update(target - done)
            self._done[doc_id] = target

    def close(self) -> None:
        self.bar.close()
