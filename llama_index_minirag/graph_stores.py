"""Opening LlamaIndex graph stores for MiniRAG, and a ``PropertyGraphIndex`` that keeps MiniRAG's
extractor and splitter when it is reopened.

* :func:`falkordb_store` - ``FalkorDBPropertyGraphStore`` from a ``falkordb://host:port[/graph]``
  URL (the client itself only takes ``falkor://``, ``falkors://``, ``redis://``, ``rediss://``
  and ``unix://``, and reads a path as a Redis database number);
* :func:`ladybug_store` - ``LadybugPropertyGraphStore`` on a database file (or in memory);
* :func:`minirag_index_kwargs` / :func:`open_property_graph` - the ``PropertyGraphIndex``
  arguments that make inserts go through :class:`MiniRAGExtractor` and
  :class:`MiniRAGTokenSplitter` (LlamaIndex's ``from_existing`` otherwise falls back to its
  default LLM extractors, whose few-shot example then lands in the graph as facts).
"""

from __future__ import annotations

import re
from typing import Any, Optional
from urllib.parse import urlparse, urlunparse

from llama_index.core.graph_stores.types import PropertyGraphStore

from .adapters import MiniLMEmbedding
from .extractor import MiniRAGExtractor
from .splitter import MiniRAGTokenSplitter

__all__ = ["close_store", "falkordb_client_url", "falkordb_store", "ladybug_store", "minirag_index_kwargs",
           "open_property_graph", "FALKORDB_SCHEMES", "LadybugLockedError"]

#: URL scheme -> the scheme the FalkorDB client takes
FALKORDB_SCHEMES = {"falkordb": "falkor", "falkordbs": "falkors", "falkor": "falkor", "falkors": "falkors",
                    "redis": "redis", "rediss": "rediss", "unix": "unix"}
DEFAULT_GRAPH = "falkor"


def falkordb_client_url(url: str) -> tuple[str, Optional[str]]:
    """``url`` as the FalkorDB client takes it, and the graph named by its path (or None).

    ``falkordb://[user:password@]host[:port][/graph]`` -> (``falkor://...``, ``graph``)."""
    parsed = urlparse(url)
    scheme = FALKORDB_SCHEMES.get(parsed.scheme.lower())
    if scheme is None:
        accepted = ", ".join(f"{s}://" for s in FALKORDB_SCHEMES)
        raise ValueError(f"{url!r}: not a FalkorDB URL; expected one of {accepted} "
                         "(e.g. falkordb://localhost:6379/my_graph)")
    if scheme == "unix":
        return url, None
    graph = parsed.path.strip("/") or None
    return urlunparse((scheme, parsed.netloc, "", "", parsed.query, "")), graph


def falkordb_store(url: str, database: Optional[str] = None, *, namespace: Optional[str] = None,
                   **kwargs: Any) -> PropertyGraphStore:
    """A ``FalkorDBPropertyGraphStore`` on ``url``; the graph is ``namespace``'s (``minirag-NAMESPACE``,
    apart from other namespaces on the server), else ``database``, else the URL's path, else
    ``"falkor"`` (the store's default). Other keywords go to the store."""
    from llama_index.graph_stores.falkordb import FalkorDBPropertyGraphStore
    from minirag_core.storage.falkordb_store import graph_name

    from .store_watch import watch

    client_url, graph = falkordb_client_url(url)
    name = graph_name(database or graph, namespace) if namespace else database or graph or DEFAULT_GRAPH
    store = FalkorDBPropertyGraphStore(url=client_url, database=name, **kwargs)
    watch(store)  # writes through it bump the graph's version, which other processes read
    return store


class LadybugLockedError(RuntimeError):
    """The Ladybug database file is open in another process.

    Ladybug lets one process at a time open a database file for writing (it locks the file), and
    the store opens it for writing (it creates its tables on open). Ladybug does open a file
    read-only beside a writer, but such a handle goes on reading the database as it was when
    opened, and read-only opens racing a writer's checkpoint are a known source of crashes, so
    MiniRAG does not use them: one process owns a Ladybug graph at a time."""

    def __init__(self, path: str, cause: BaseException) -> None:
        holder = re.search(r"held by PID (\d+)", str(cause))
        self.path, self.pid = path, int(holder.group(1)) if holder else None
        super().__init__(
            f"the Ladybug database {path} is open in another process"
            + (f" (PID {self.pid})" if self.pid else "")
            + ": Ladybug lets one process at a time open a database file for writing, and a MiniRAG graph "
            "on Ladybug is used by one process at a time. Close it in that process first "
            "(llama_index_minirag.close_store(store)), then open it here; for a graph that several processes "
            "read and write at once, use FalkorDB (llama_index_minirag.falkordb_store). Ladybug said: "
            + str(cause).splitlines()[0])


def ladybug_store(path: Optional[str] = None, **kwargs: Any) -> PropertyGraphStore:
    """A ``LadybugPropertyGraphStore`` on the database file ``path`` (None: in memory), with
    batched entity and relation writes (:mod:`llama_index_minirag.ladybug_writes`). Its
    vector index is off by default (it needs an extension downloaded on first use; MiniRAG
    searches its own vectors). MiniRAG's records are kept beside it
    (:mod:`llama_index_minirag.ladybug_access`). Raises :class:`LadybugLockedError` while another
    process has the file open (one process at a time; :func:`close_store` releases it)."""
    import ladybug as lb

    from .ladybug_writes import BatchedLadybugStore
    from .store_watch import watch

    kwargs.setdefault("use_vector_index", False)
    try:
        db = lb.Database(str(path) if path else ":memory:")
    except RuntimeError as exc:
        if "Could not set lock" in str(exc):
            raise LadybugLockedError(str(path), exc) from exc
        raise
    store = BatchedLadybugStore(db, **kwargs)
    watch(store)  # MiniRAG's records are written beside the database as the store is written
    return store


def close_store(store: PropertyGraphStore) -> None:
    """Close ``store`` (for Ladybug: its connections and database, releasing the file lock so
    another process can open it, and MiniRAG's records file)."""
    from .store_readers import access_for
    from .store_watch import watched_access

    (watched_access(store) or access_for(store)).close()


def minirag_index_kwargs(embed_model: Any = None, *, llm: Any = None, extractor_llm: Any = None,
                         split: bool = True, **extractor_kwargs: Any) -> dict[str, Any]:
    """Keyword arguments for ``PropertyGraphIndex(...)`` / ``.from_documents`` /
    ``.from_existing`` so inserts go through MiniRAG: ``kg_extractors=[MiniRAGExtractor]``,
    ``transformations=[MiniRAGTokenSplitter]`` (the core's chunks; ``split=False`` keeps
    LlamaIndex's parser), ``embed_model`` (default: the bundled all-MiniLM-L6-v2),
    ``embed_kg_nodes=False`` (MiniRAG embeds its own texts) and ``use_async=False``.
    ``llm``: the index's LLM (default ``MockLLM``: MiniRAG needs none to index);
    ``extractor_llm``: a model for MiniRAG's extraction prompt (default: offline extraction)."""
    from llama_index.core.llms import MockLLM

    embed_model = embed_model if embed_model is not None else MiniLMEmbedding()
    kwargs: dict[str, Any] = {
        "kg_extractors": [MiniRAGExtractor(extractor_llm, embed_model=embed_model, **extractor_kwargs)],
        "embed_model": embed_model, "llm": llm if llm is not None else MockLLM(),
        "embed_kg_nodes": False, "use_async": False}
    if split:
        kwargs["transformations"] = [MiniRAGTokenSplitter(embed_model=embed_model)]
    return kwargs


def open_property_graph(property_graph_store: PropertyGraphStore, embed_model: Any = None, **kwargs: Any) -> Any:
    """``PropertyGraphIndex.from_existing`` over a MiniRAG graph, with
    :func:`minirag_index_kwargs` (``kwargs`` override them), so ``index.insert(doc)`` extracts
    with MiniRAG. The store's writes are watched, so MiniRAG retrievers see them."""
    from llama_index.core import PropertyGraphIndex

    from .store_watch import watch

    options = minirag_index_kwargs(embed_model, **{k: kwargs.pop(k) for k in ("llm", "extractor_llm", "split")
                                                   if k in kwargs})
    options.update(kwargs)
    watch(property_graph_store)
    return PropertyGraphIndex.from_existing(property_graph_store=property_graph_store, **options)
