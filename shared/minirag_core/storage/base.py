"""Storage protocols: the graph view retrieval reads, the graph store the index writes through,
the vector store, and atomic files."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Mapping, Protocol, Sequence, runtime_checkable

import networkx as nx
import numpy as np

from minirag_core.graph.heterogeneous import CHUNK
from minirag_core.types import is_known_type


@runtime_checkable
class GraphView(Protocol):
    """What MiniRAG's retrieval needs from a graph; the networkx store and the LlamaIndex
    property-graph adapter each implement it."""

    def entity(self, entity_id: str) -> dict[str, Any] | None:
        """Entity attributes (name, type, description, source_chunks) or None."""

    def entity_subgraph(self, seeds: Iterable[str], hops: int, max_nodes: int) -> nx.Graph:
        """Entity nodes within ``hops`` relation edges of ``seeds`` (at most ``max_nodes``,
        nearest first) with their relation edges and attributes, as an in-memory graph."""

    def chunk_links(self, entity_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """For each entity, its chunks and the entity-chunk edge description."""

    def entity_chunk_ids(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        """For each entity, its chunks' ids, sorted (``chunk_links`` without the descriptions,
        what retrieval reads: for a hub entity thousands of them)."""

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Chunk attributes (text, doc_id, order, n_tokens; start_index, end_index and
        heading_path, None and [] where unknown) by id."""

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """The entities each chunk mentions."""

    def subject_chunks(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        """For each entity, the chunks that are about it (a passage's title, a section's heading)."""

    def chunk_ids(self) -> list[str]:
        """Every chunk id, sorted."""

    def type_pool(self, examples_per_type: int = 3) -> dict[str, list[str]]:
        """Entity types present in the graph with example names, most frequent type first."""


@dataclass
class Change:
    """What one write touched: node ids, edges, and entries of dict-valued graph attributes
    (``documents``: the registry)."""

    nodes: Iterable[str] = ()
    edges: Iterable[tuple[str, str]] = ()
    entries: Mapping[str, Iterable[str]] | None = None
    #: the chunks this write only added: an entity or relation is then logged with those
    #: chunks' records alone (its merged attributes are derived again on replay), so a
    #: write's record does not grow with how often a hub entity was seen before
    added_chunks: Iterable[str] | None = None


def change_items(graph: nx.Graph, change: Change | None, documents: Iterable[str]) -> tuple[
        list[str], set[tuple[str, str]], list[str]]:
    """What a server or file store writes for ``change`` from its working ``graph`` (without a
    change: all of it, with every registry entry in ``documents``): node ids, edges as
    ``(smaller, larger)`` pairs (a chunk brings its mentions) and registry entries."""
    if change is None:
        change = Change(list(graph.nodes), list(graph.edges), {"documents": list(documents)})
    nodes = list(dict.fromkeys(change.nodes))
    pairs = {(min(u, v), max(u, v)) for u, v in change.edges}
    for node in nodes:
        if graph.has_node(node) and graph.nodes[node].get("kind") == CHUNK:
            pairs.update((min(node, n), max(node, n)) for n in graph.neighbors(node))
    return nodes, pairs, list(dict.fromkeys((change.entries or {}).get("documents", ())))


@runtime_checkable
class GraphStore(GraphView, Protocol):
    """A ``GraphView`` the index writes through: it edits a working networkx graph with
    ``minirag_core.graph.heterogeneous``'s operations, then ``save``s the change.

    The networkx store's working graph is the whole graph; a server-backed store hands out
    only the part a write reads and changes, and ``save`` sends the change to the server.
    """

    def documents(self) -> dict[str, dict[str, Any]]:
        """The document registry in its stored form, edited in place; ``save`` persists the
        entries a change names under ``documents``."""

    def working_graph(self, chunk_ids: Iterable[str] = (), entity_ids: Iterable[str] = (),
                      edges: Iterable[tuple[str, str]] = ()) -> nx.Graph:
        """A graph holding at least the given chunks (with their mentions, their entities and
        the relations they list), entities and relation edges, with every attribute."""

    def save(self, change: Change | None = None) -> None:
        """Persist what ``change`` names from the working graph (without one: all of it)."""

    def reload_if_changed(self) -> bool:
        """Catch up with another process's writes; True if there were any."""

    def settle(self) -> None:
        """End of a write session (the index calls it before releasing the workdir lock): fold
        what was logged into the compact form the next reader opens fastest (a no-op where
        nothing is logged)."""

    def changed(self) -> None:
        """Forget what was derived from the graph (called after every write)."""

    def entity_ids(self) -> list[str]: ...

    def count_chunks(self) -> int:
        """How many chunks the graph holds (counted by the store: no id is listed)."""

    def relation_keywords(self) -> Mapping[tuple[str, str], str]:
        """Every relation edge ``(u, v)`` with ``u < v``, with its keywords."""

    def stats(self) -> dict[str, int]: ...


@runtime_checkable
class VectorStore(Protocol):
    """Named collections of vectors with ids, texts and scalar metadata."""

    def upsert(self, collection: str, ids: Sequence[str], embeddings: np.ndarray,
               documents: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> None: ...

    def delete(self, collection: str, ids: Sequence[str]) -> None: ...

    def query(self, collection: str, embedding: np.ndarray, k: int,
              where: dict[str, Any] | None = None) -> list[tuple[str, float, dict[str, Any]]]:
        """Nearest ``k`` items as (id, cosine similarity, metadata), best first."""

    def ids(self, collection: str) -> set[str]:
        """Every id in the collection."""

    def get_embeddings(self, collection: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` (those present), by id."""

    def get_documents(self, collection: str, ids: Sequence[str]) -> dict[str, str]:
        """The stored texts of ``ids`` (those present), by id."""

    def count(self, collection: str) -> int: ...


def rank_type_pool(entities: Iterable[tuple[str, str, int]], examples_per_type: int) -> dict[str, list[str]]:
    """``type_pool`` from (type, name, degree) rows in the store's order: types by how many
    names they have, each with its highest-degree names (ties in row order)."""
    by_type: dict[str, Counter] = {}
    for type_, name, degree in entities:
        if is_known_type(str(type_ or "")):  # an untyped entity is no example of an answer type
            by_type.setdefault(type_, Counter())[name] = degree
    ranked = sorted(by_type, key=lambda t: (-len(by_type[t]), t))
    return {t: [n for n, _ in by_type[t].most_common(examples_per_type)] for t in ranked}


def atomic_write(path: Path, write: Callable[[BinaryIO], Any]) -> None:
    """Write-then-rename (``write`` fills the new file), so a crash leaves either the old or
    the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, sort_keys=True))


def read_json(path: Path, default: Any) -> Any:
    if not path.exists():
        return default
    return json.loads(path.read_text(encoding="utf-8"))
