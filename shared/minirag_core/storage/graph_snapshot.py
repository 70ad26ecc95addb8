"""The graph's snapshot file: node-link JSON written and read one node or edge at a time.

The file is ordinary node-link JSON (``networkx.node_link_graph`` reads it) laid out with one
node or edge per line, so that neither writing nor reading ever holds the whole document as
one string (for a large graph that string, in memory, is several times the file's size).
A snapshot written in one piece (a single line, the earlier layout) is still read whole.

Reading shares equal strings (ids, kinds, types, chunk ids in lists, descriptions repeated
by the per-chunk records) between the items, as a graph built in-process does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import networkx as nx

from minirag_core.storage.base import atomic_write

__all__ = ["read_snapshot", "share_strings", "write_snapshot"]

#: items (nodes or edges) per write
_BATCH = 2000


def share_strings(value: Any, memo: dict[str, str]) -> Any:
    """``value`` (parsed JSON) with every string, key or value, replaced by the first equal
    one ``memo`` has seen; containers are rebuilt only when that changes nothing in type."""
    if isinstance(value, str):
        return memo.setdefault(value, value)
    if isinstance(value, dict):
        return {memo.setdefault(k, k): share_strings(v, memo) for k, v in value.items()}
    if isinstance(value, list):
        return [share_strings(v, memo) for v in value]
    return value


def _lines(graph: nx.Graph, log_seq: int) -> Iterator[str]:
    """The snapshot's lines: a header, the graph's attributes, then one line per node and edge."""
    dump = lambda item: json.dumps(item, ensure_ascii=False, sort_keys=True)  # noqa: E731
    yield '{"directed": false, "multigraph": false, "log_seq": %d, "layout": "lines",\n' % log_seq
    yield f'"graph": {dump(graph.graph)},\n"nodes": [\n'
    last = len(graph) - 1
    for i, (node, attrs) in enumerate(graph._node.items()):
        yield dump({**attrs, "id": node}) + (",\n" if i < last else "\n")
    yield '],\n"edges": [\n'
    first = True
    for u, v, attrs in graph.edges(data=True):
        yield ("" if first else ",\n") + dump({**attrs, "source": u, "target": v})
        first = False
    yield "\n]}\n"


def write_snapshot(path: Path, graph: nx.Graph, log_seq: int) -> None:
    """Write the snapshot atomically (write-then-rename), a batch of lines at a time."""
    def write(handle: BinaryIO) -> None:
        batch: list[str] = []
        for line in _lines(graph, log_seq):
            batch.append(line)
            if len(batch) >= _BATCH:
                handle.write("".join(batch).encode("utf-8"))
                batch = []
        handle.write("".join(batch).encode("utf-8"))

    atomic_write(path, write)


def _item(line: bytes) -> dict[str, Any] | None:
    text = line.strip().rstrip(b",")
    return json.loads(text) if text.startswith(b"{") else None


def read_snapshot(path: Path) -> tuple[nx.Graph, int]:
    """The graph in the snapshot at ``path`` and the last log record it includes."""
    memo: dict[str, str] = {}
    with open(path, "rb") as handle:
        first = handle.readline()
        if b'"layout": "lines"' not in first:  # written in one piece
            data = share_strings(json.loads(first + handle.read()), memo)
            return nx.node_link_graph(data, edges="edges"), int(data.get("log_seq", 0))
        header = json.loads(first.rstrip().rstrip(b",") + b"}")
        graph = nx.Graph()
        graph.graph.update(share_strings(json.loads(b"{" + handle.readline().rstrip().rstrip(b",") + b"}")["graph"],
                                         memo))
        nodes, adjacency = graph._node, graph._adj
        handle.readline()  # "nodes": [
        for line in handle:
            item = _item(line)
            if item is None:
                break  # ],
            attrs = share_strings(item, memo)
            node = attrs.pop("id")
            nodes[node], adjacency[node] = attrs, {}
        handle.readline()  # "edges": [
        for line in handle:
            item = _item(line)
            if item is None:
                break
            attrs = share_strings(item, memo)
            u, v = attrs.pop("source"), attrs.pop("target")
            for n in (u, v):
                if n not in nodes:
                    nodes[n], adjacency[n] = {}, {}
            adjacency[u][v] = adjacency[v][u] = attrs
        return graph, int(header.get("log_seq", 0))
