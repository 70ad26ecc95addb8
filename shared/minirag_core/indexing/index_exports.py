"""What ``MiniRAGIndex`` hands out whole: the graph as a GraphML or JSON file (``graph/export.py``)."""

from __future__ import annotations

from pathlib import Path

from minirag_core.concurrency import ReadWriteLock
from minirag_core.graph.export import write_graph
from minirag_core.storage.base import GraphStore
from minirag_core.storage.graph_stores import whole_graph


class IndexExports:
    """Mixed into ``MiniRAGIndex``: reads of the whole index, under its read lock."""

    graph_store: GraphStore
    _rw: ReadWriteLock

    def export_graph(self, path: str | Path, format: str = "graphml") -> Path:
        """Write the heterogeneous graph (chunks, entities, relations, mentions, with types,
        descriptions, weights and chunk offsets) to ``path`` as ``graphml`` or ``json``."""
        with self._rw.read():
            return write_graph(whole_graph(self.graph_store), path, format)
