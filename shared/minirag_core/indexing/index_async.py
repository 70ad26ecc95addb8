"""The async twins of ``MiniRAGIndex``'s writes and whole-index reads: each runs its sync form in
a worker thread, so the event loop keeps serving while extraction, embedding and store IO run
(``aquery`` / ``aanswer`` are the index's own: model calls are awaited, ranking is threaded)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable, Iterable, Sequence

from minirag_core.indexing.documents import DocumentInput, InsertReport


class IndexAsync:
    """Mixed into ``MiniRAGIndex``, which provides the sync forms."""

    insert: Callable[..., InsertReport]
    delete: Callable[[str | Sequence[str]], list[str]]
    export_graph: Callable[[str | Path, str], Path]

    async def ainsert(self, documents: Iterable[DocumentInput], *, show_progress: bool | None = None) -> InsertReport:
        """Async :meth:`MiniRAGIndex.insert`."""
        return await asyncio.to_thread(self.insert, list(documents), show_progress=show_progress)

    async def adelete(self, doc_ids: str | Sequence[str]) -> list[str]:
        """Async :meth:`MiniRAGIndex.delete`."""
        return await asyncio.to_thread(self.delete, doc_ids)

    async def aexport_graph(self, path: str | Path, format: str = "graphml") -> Path:
        """Async :meth:`MiniRAGIndex.export_graph`."""
        return await asyncio.to_thread(self.export_graph, path, format)
