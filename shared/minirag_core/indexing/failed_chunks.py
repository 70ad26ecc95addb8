"""Chunks whose extraction failed, recorded in the workdir until a later write extracts them.

A failed chunk is indexed without entities (``indexing/cached_extraction.py``) and its document
registered as complete, so re-inserting the same document would skip it. Instead every write first
retries the chunks recorded here (``MiniRAGIndex``), and ``minirag info`` lists them. The record is
``{chunk_id: {"doc_id", "metadata"}}``: the chunk's text is in the graph, its metadata (which the
extractor may read) only here.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from minirag_core.llm.base import LLMError
from minirag_core.storage.base import GraphView, atomic_write_json, read_json
from minirag_core.types import Chunk, ExtractionResult

logger = logging.getLogger("minirag_core")

FAILED_FILE = "failed_chunks.json"


class FailedChunks:
    """The record, kept in memory and (with a workdir) in ``FAILED_FILE``; changed under the write lock."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._found: dict[str, dict[str, Any]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Read the record again (another process may have written it)."""
        if self.path is not None:
            found = read_json(self.path, {}) if self.path.exists() else {}
            self._found = found if isinstance(found, dict) else {}

    def __len__(self) -> int:
        return len(self._found)

    def entries(self) -> dict[str, dict[str, Any]]:
        return dict(self._found)

    def update(self, failed: Iterable[Chunk], succeeded: Iterable[str] = ()) -> None:
        """Record ``failed`` chunks and forget ``succeeded`` ones (by id)."""
        changed = dict(self._found)
        for chunk_id in succeeded:
            changed.pop(chunk_id, None)
        for chunk in failed:
            changed[chunk.id] = {"doc_id": chunk.doc_id, "metadata": dict(chunk.metadata)}
        self._save(changed)

    def discard(self, chunk_ids: Iterable[str]) -> None:
        """Forget chunks (deleted, or extracted at last)."""
        self.update((), chunk_ids)

    def chunks(self, stored: Mapping[str, Mapping[str, Any]]) -> list[Chunk]:
        """The recorded chunks that the graph still holds, rebuilt from their ``stored`` attributes."""
        return [Chunk(id=c, doc_id=str(a["doc_id"]), order=int(a.get("order", 0)), text=str(a["text"]),
                      n_tokens=int(a.get("n_tokens", 0)), metadata=dict(self._found[c].get("metadata", {})),
                      start_index=a.get("start_index"), end_index=a.get("end_index"))
                for c, a in stored.items() if c in self._found]

    def _save(self, changed: dict[str, dict[str, Any]]) -> None:
        if changed == self._found:
            return
        self._found = changed
        if self.path is not None:
            atomic_write_json(self.path, changed)


def retry_failed(failed: FailedChunks, graph_store: GraphView,
                 extract: Callable[[list[Chunk]], list[ExtractionResult | None]]) -> list[tuple[Chunk, ExtractionResult]]:
    """Extract the recorded chunks the graph still holds again (forgetting those it no longer
    does); the ones that succeed now, with their results. A model still unreachable
    (``LLMError``) leaves them all for a later write."""
    failed.refresh()
    if not len(failed):
        return []
    recorded = failed.entries()
    chunks = failed.chunks(graph_store.chunks(recorded))
    failed.discard(set(recorded) - {c.id for c in chunks})  # deleted since
    if not chunks:
        return []
    try:
        found = extract(chunks)
    except LLMError as exc:
        logger.warning("%d chunks without entities wait for a later write: %s", len(chunks), exc)
        return []
    done = [(c, e) for c, e in zip(chunks, found) if e is not None]
    if done:
        logger.info("extracted %d chunks whose extraction had failed before", len(done))
    return done
