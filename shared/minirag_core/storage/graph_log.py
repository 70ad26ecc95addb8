"""Incremental persistence of a networkx graph: a node-link JSON snapshot plus an append-only
log of the nodes, edges and registry entries each write changed.

A write costs in proportion to what it changed; the snapshot is rewritten only once the log
outgrows it (amortised cost stays proportional to the changes). Every log record carries a
sequence number and the snapshot the last one it includes, so a crash between writing a
snapshot and emptying the log replays nothing twice; a torn last line (a crash mid-append)
is ignored and cut off before the next append.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import networkx as nx

from minirag_core.graph.heterogeneous import MERGED_FIELDS, add_sources
from minirag_core.graph.records import ensure_tally
from minirag_core.storage.base import Change
from minirag_core.storage.graph_snapshot import read_snapshot, share_strings, write_snapshot

__all__ = ["Change", "GraphFiles"]

#: the log is folded into a new snapshot once it is this many times the snapshot's size
COMPACT_RATIO = 1.0
MIN_COMPACT_BYTES = 1 << 20
#: ... and at the end of a write session once it is this share of it: every later open would
#: otherwise replay it (a whole-corpus ``insert`` leaves a log about half the snapshot's size)
SETTLE_RATIO = 0.25


def _logged(attrs: dict[str, Any] | None, added: set[str] | None) -> Any:
    """An item's attributes as logged: whole, or as a delta of its per-chunk ``sources``."""
    if attrs is None or added is None or attrs.get("kind") not in MERGED_FIELDS or "sources" not in attrs:
        return attrs
    derived = {"sources", *MERGED_FIELDS[attrs["kind"]]}
    rest = {k: v for k, v in attrs.items() if k not in derived}
    return {"__sources_added__": {c: attrs["sources"][c] for c in sorted(added & attrs["sources"].keys())}, **rest}


def _restore(current: dict[str, Any] | None, logged: dict[str, Any]) -> dict[str, Any]:
    """Attributes after applying a logged record (whole, or a ``sources`` delta)."""
    if "__sources_added__" not in logged:
        return ensure_tally(logged)
    attrs = {k: v for k, v in logged.items() if k != "__sources_added__"}
    attrs["sources"] = dict((current or {}).get("sources", {}))
    if current is not None and "tally" in ensure_tally(current):
        attrs["tally"] = current["tally"]
    add_sources(attrs, logged["__sources_added__"])
    return attrs


def _record(graph: nx.Graph, seq: int, change: Change) -> dict[str, Any]:
    nodes, edges = [], []
    adjacency = graph._adj
    added = set(change.added_chunks) if change.added_chunks is not None else None
    logged_edges: set[tuple[str, str]] = set()
    for node in dict.fromkeys(change.nodes):
        attrs = graph.nodes[node] if node in adjacency else None
        nodes.append([node, _logged(attrs, added)])
        if attrs is not None and attrs.get("kind") == "chunk":  # a chunk is logged with its mentions
            for other in adjacency[node]:
                logged_edges.add((min(node, other), max(node, other)))
    for u, v in change.edges:
        logged_edges.add((min(u, v), max(u, v)))
    for u, v in sorted(logged_edges):
        edges.append([u, v, _logged(adjacency[u].get(v) if u in adjacency else None, added)])
    entries = {key: [[k, graph.graph.get(key, {}).get(k)] for k in dict.fromkeys(ids)]
               for key, ids in (change.entries or {}).items()}
    return {"seq": seq, "nodes": nodes, "edges": edges, "entries": entries}


def _apply(graph: nx.Graph, record: dict[str, Any]) -> None:
    for node, attrs in record["nodes"]:
        if attrs is None:
            if graph.has_node(node):
                graph.remove_node(node)
        else:
            attrs = _restore(graph.nodes[node] if graph.has_node(node) else None, attrs)
            if graph.has_node(node):
                graph.nodes[node].clear()
            graph.add_node(node, **attrs)
    for u, v, attrs in record["edges"]:
        if attrs is None:
            if graph.has_edge(u, v):
                graph.remove_edge(u, v)
        else:
            attrs = _restore(graph.edges[u, v] if graph.has_edge(u, v) else None, attrs)
            if graph.has_edge(u, v):
                graph.edges[u, v].clear()
            graph.add_edge(u, v, **attrs)
    for key, pairs in record["entries"].items():
        target = graph.graph.setdefault(key, {})
        for k, value in pairs:
            if value is None:
                target.pop(k, None)
            else:
                target[k] = value


class GraphFiles:
    """The snapshot at ``path`` and its log beside it (``<stem>.log.jsonl``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log_path = path.with_name(path.stem + ".log.jsonl")
        self.seq = 0            # last sequence number read or written
        self.log_offset = 0     # bytes of the log read (whole lines only)
        self._snapshot_stamp: tuple[int, int] | None = None

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int] | None:
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def stamp(self) -> tuple[Any, ...] | None:
        """Changes whenever another process wrote the snapshot or appended to the log."""
        snapshot = self._stamp(self.path)
        return None if snapshot is None else (snapshot, self._stamp(self.log_path))

    def load(self, graph: nx.Graph | None) -> nx.Graph:
        """The graph on disk; with ``graph`` (what this reader last loaded) and an unchanged
        snapshot, only the log's new lines are applied to it."""
        snapshot = self._stamp(self.path)
        if graph is None or snapshot != self._snapshot_stamp:
            graph, self.seq = read_snapshot(self.path)
            for _, attrs in graph.nodes(data=True):  # a snapshot written before tallies existed
                ensure_tally(attrs)
            for _, _, attrs in graph.edges(data=True):
                ensure_tally(attrs)
            self.log_offset, self._snapshot_stamp = 0, snapshot
        self._replay(graph)
        return graph

    def _replay(self, graph: nx.Graph) -> None:
        if not self.log_path.exists():
            self.log_offset = 0
            return
        memo: dict[str, str] = {}  # equal strings shared across the records, as in a snapshot
        with open(self.log_path, "rb") as handle:
            handle.seek(self.log_offset)
            for line in handle:
                if not line.endswith(b"\n"):
                    break  # torn by a crash mid-append: not part of the graph
                try:
                    record = json.loads(line)
                except ValueError:
                    break
                if record["seq"] > self.seq:
                    _apply(graph, share_strings(record, memo))
                    self.seq = record["seq"]
                self.log_offset += len(line)

    def write_snapshot(self, graph: nx.Graph) -> None:
        write_snapshot(self.path, graph, self.seq)
        self._snapshot_stamp = self._stamp(self.path)
        if self.log_path.exists():
            os.truncate(self.log_path, 0)  # a crash before this: the snapshot's log_seq skips it
        self.log_offset = 0

    def settle(self, graph: nx.Graph) -> bool:
        """Fold the log into a new snapshot if it is over ``SETTLE_RATIO`` of the snapshot; True if it was."""
        if self._snapshot_stamp is None or self.log_offset <= SETTLE_RATIO * self._snapshot_stamp[1]:
            return False
        self.write_snapshot(graph)
        return True

    def append(self, graph: nx.Graph, change: Change) -> None:
        """Log one write; fold the log into a new snapshot once it outgrows the old one."""
        if self._snapshot_stamp is None:
            self.write_snapshot(graph)
            return
        self.seq += 1
        line = (json.dumps(_record(graph, self.seq, change), ensure_ascii=False, sort_keys=True) + "\n").encode()
        with open(self.log_path, "ab") as handle:
            if handle.tell() > self.log_offset:
                handle.truncate(self.log_offset)  # drop a torn line left by a crash
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self.log_offset += len(line)
        if self.log_offset > max(MIN_COMPACT_BYTES, COMPACT_RATIO * self._snapshot_stamp[1]):
            self.write_snapshot(graph)
