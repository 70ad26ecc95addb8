"""Reads of a whole ``MiniRAGIndex``: its documents, sizes, and the graph as a GraphML or JSON
file (``graph/export.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minirag_core.concurrency import ReadWriteLock
from minirag_core.graph.export import write_graph
from minirag_core.indexing.registry import DocumentRegistry
from minirag_core.storage.base import GraphStore
from minirag_core.storage.graph_stores import whole_graph


class IndexReads:
    """Mixed into ``MiniRAGIndex``: what it holds, read from its graph store."""

    graph_store: GraphStore
    _rw: ReadWriteLock

    @property
    def _documents(self) -> dict[str, dict[str, Any]]:
        """The registry in its stored form (a dict in the graph's attributes)."""
        return self.graph_store.documents()

    @property
    def registry(self) -> DocumentRegistry:
        """Typed view of the document registry (``DocumentRecord`` per document)."""
        return DocumentRegistry(self._documents)

    def document_ids(self) -> list[str]:
        return sorted(self._documents)

    def doc_metadata(self) -> dict[str, dict[str, Any]]:
        return self.registry.metadata()

    def stats(self) -> dict[str, int]:
        return {"documents": len(self._documents), **self.graph_store.stats()}

    def export_graph(self, path: str | Path, format: str = "graphml") -> Path:
        """Write the heterogeneous graph (chunks, entities, relations, mentions, with types,
        descriptions, weights and chunk offsets) to ``path`` as ``graphml`` or ``json``."""
        with self._rw.read():
            return write_graph(whole_graph(self.graph_store), path, format)
