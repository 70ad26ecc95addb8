"""Which graph store an index opens: an embedded store (networkx in memory, or a SQLite file for
graphs larger than memory), or a FalkorDB graph named by URL."""

from __future__ import annotations

import uuid
from pathlib import Path

import networkx as nx

from minirag_core.graph.records import CHUNK_LOADER, ITEM_LOADER, SOURCE_LOADER
from minirag_core.storage.base import GraphStore, atomic_write_json, read_json
from minirag_core.storage.locations import StoreMismatch, StoreUnreachable
from minirag_core.storage.networkx_store import NetworkXGraphStore

#: in a workdir whose graph lives on a server: the name of that graph there
GRAPH_SERVER_FILE = "graph_server.json"
#: the embedded stores, by name, and the file each keeps in the workdir
EMBEDDED_FILES = {"networkx": "graph.json", "sqlite": "graph.sqlite"}


class GraphStoreMismatch(StoreMismatch):
    """The workdir's graph lives elsewhere than where it was asked for."""


def whole_graph(store: GraphStore) -> nx.Graph:
    """A store's whole graph as one networkx graph with the registry (``graph["documents"]``):
    the networkx store's own, or a working graph of every chunk, entity and relation."""
    if getattr(store, "holds_whole_graph", False):
        return store.working_graph()
    graph = store.working_graph(store.chunk_ids(), store.entity_ids(), sorted(store.relation_keywords()))
    for loader in (SOURCE_LOADER, ITEM_LOADER, CHUNK_LOADER):  # every chunk is loaded, so every item holds all its records
        graph.graph.pop(loader, None)
    graph.graph["documents"] = store.documents()
    return graph


def _embedded_store(workdir: Path | None, backend: str | None) -> GraphStore:
    """The embedded store a workdir holds (a new one: ``backend``, networkx by default)."""
    if backend is not None and backend not in EMBEDDED_FILES:
        raise ValueError(f"graph backend {backend!r}: expected one of {sorted(EMBEDDED_FILES)}")
    held = [name for name, file in EMBEDDED_FILES.items() if workdir is not None and (workdir / file).exists()]
    if held and backend is not None and backend not in held:
        raise GraphStoreMismatch(f"{workdir} keeps its graph in {EMBEDDED_FILES[held[0]]} ({held[0]}), "
                                 f"not {backend}: open it without {{graph_backend}}, or index into a new workdir",
                                 graph_backend=None)
    chosen = backend or (held[0] if held else "networkx")
    path = workdir / EMBEDDED_FILES[chosen] if workdir is not None else None
    if chosen == "sqlite":
        from minirag_core.storage.sqlite_store import SQLiteGraphStore

        return SQLiteGraphStore(path)
    return NetworkXGraphStore(path)


def open_graph_store(workdir: Path | None, falkordb_url: str | None = None,
                     backend: str | None = None, namespace: str | None = None) -> GraphStore:
    """The store for ``workdir``: the embedded one it holds (``graph.json``: networkx,
    ``graph.sqlite``: SQLite; for a new workdir ``backend``, networkx by default), or with
    ``falkordb_url`` (``falkordb://host:port[/graph]``) a graph on that server: ``namespace``'s
    (``storage/namespaces.py``), else the one the URL names. A URL naming no graph gets one own to
    the workdir, recorded in ``graph_server.json`` so that reopening finds it."""
    record = workdir / GRAPH_SERVER_FILE if workdir is not None else None
    found = read_json(record, None) if record is not None else None
    if not falkordb_url:
        if found is not None:
            raise GraphStoreMismatch(f"{workdir} keeps its graph on a FalkorDB server (graph {found['graph']!r}"
                                     f"{' at ' + found['url'] if found.get('url') else ''}): open it with "
                                     "{falkordb_url}", falkordb_url=found.get("url") or "falkordb://HOST:PORT")
        return _embedded_store(workdir, backend)
    from minirag_core.storage.falkordb_store import FalkorDBGraphStore, graph_name, parse_url

    held = [f for f in EMBEDDED_FILES.values() if workdir is not None and (workdir / f).exists()]
    if held:
        raise GraphStoreMismatch(f"{workdir} keeps its graph in {held[0]} (an embedded store): "
                                 "open it without {falkordb_url}, or index into a new workdir", falkordb_url=None)
    named = graph_name(parse_url(falkordb_url)[2], namespace) if namespace else parse_url(falkordb_url)[2]
    known = found["graph"] if found is not None else None
    if named and known and named != known:
        raise GraphStoreMismatch(f"{workdir} was built on graph {known!r}, not {named!r}")
    graph = named or known or f"minirag-{uuid.uuid4().hex[:12]}"
    from redis.exceptions import ConnectionError as RedisConnectionError, TimeoutError as RedisTimeout

    try:
        store = FalkorDBGraphStore.from_url(falkordb_url, graph)
    except (OSError, RedisConnectionError, RedisTimeout) as exc:
        raise StoreUnreachable("FalkorDB", _without_password(falkordb_url), exc) from exc
    if record is not None and known is None:  # recorded once the server answered
        atomic_write_json(record, {"graph": graph, "url": _without_password(falkordb_url)})
    return store


def _without_password(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}@{host}" if parts.username else host
    return urlunsplit(parts._replace(netloc=netloc + (f":{parts.port}" if parts.port else "")))
