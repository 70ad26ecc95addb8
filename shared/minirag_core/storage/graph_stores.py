"""Which graph store an index opens: the embedded networkx store, or a FalkorDB graph named by URL."""

from __future__ import annotations

import uuid
from pathlib import Path

from .base import GraphStore, atomic_write_json, read_json
from .networkx_store import NetworkXGraphStore

#: in a workdir whose graph lives on a server: the name of that graph there
GRAPH_SERVER_FILE = "graph_server.json"


class GraphStoreMismatch(ValueError):
    """The workdir's graph lives elsewhere than where it was asked for."""


def open_graph_store(workdir: Path | None, falkordb_url: str | None = None) -> GraphStore:
    """The store for ``workdir``: ``graph.json`` in it, or with ``falkordb_url``
    (``falkordb://host:port[/graph]``) a graph on that server. A URL naming no graph gets one
    own to the workdir, recorded in ``graph_server.json`` so that reopening finds it."""
    record = workdir / GRAPH_SERVER_FILE if workdir is not None else None
    found = read_json(record, None) if record is not None else None
    if not falkordb_url:
        if found is not None:
            raise GraphStoreMismatch(f"{workdir} keeps its graph on a FalkorDB server (graph {found['graph']!r}): "
                             "open it with falkordb_url='falkordb://HOST:PORT'")
        return NetworkXGraphStore(workdir / "graph.json" if workdir is not None else None)
    from .falkordb_store import FalkorDBGraphStore, parse_url

    if workdir is not None and (workdir / "graph.json").exists():
        raise GraphStoreMismatch(f"{workdir} keeps its graph in graph.json (the embedded store): "
                         "open it without falkordb_url, or index into a new workdir")
    named = parse_url(falkordb_url)[2]
    known = found["graph"] if found is not None else None
    if named and known and named != known:
        raise GraphStoreMismatch(f"{workdir} was built on graph {known!r}, not {named!r}")
    graph = named or known or f"minirag-{uuid.uuid4().hex[:12]}"
    if record is not None and known is None:
        atomic_write_json(record, {"graph": graph})
    return FalkorDBGraphStore.from_url(falkordb_url, graph)
