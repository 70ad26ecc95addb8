"""``FilteredSources``: any ``RetrievalSources`` seen through a metadata filter, so that every
mode ranks, seeds, walks and bridges over the passing chunks alone.

The view holds the passing chunks, the entities they mention and the relations they state:
dense and BM25 scores cover passing chunks only (BM25 with the passing chunks' own statistics;
past the in-memory limit the vector store's search gets a ``where`` on the passing documents),
entity and relation search keep the nearest backed by a passing chunk, and the graph view
drops every other entity, relation, link and chunk. A relation weighs what the passing chunks'
records give it where the store can say (the networkx and SQLite stores), else its whole weight.
"""

from __future__ import annotations

from collections import OrderedDict
from itertools import combinations
from typing import Any, Callable, Iterable, Mapping, TypeVar

import networkx as nx
import numpy as np

from minirag_core.graph.arrays import RelationArrays, _edge_columns
from minirag_core.retrieval.filters import Passing
from minirag_core.retrieval.sources import RetrievalSources
from minirag_core.scores import ScoreTable
from minirag_core.search.vectors import CHUNKS
from minirag_core.storage.base import GraphView
from minirag_core.storage.networkx_store import NetworkXGraphStore

Item = TypeVar("Item")
#: filtered views a sources object keeps (one per recent filter)
KEPT_VIEWS = 4
#: most passing documents a vector store's search is given by id (a SQLite-backed store binds each
#: one as a variable); past it the search asks for more nearest chunks and keeps the passing ones
MAX_WHERE_DOCUMENTS = 5000
#: how many times its usual number of nearest chunks that wider search asks for, at most
MAX_WIDENING = 20


def nearest_passing(search: Callable[[int], list[Item]], k: int, keep: Callable[[Item], bool]) -> list[Item]:
    """The first ``k`` items of ``search(n)`` (best first) that ``keep`` passes, asking for more
    until ``k`` pass or the search runs out."""
    n = max(4 * k, 16)
    while k > 0:
        found = search(n)
        kept = [item for item in found if keep(item)]
        if len(kept) >= k or len(found) < n:
            return kept[:k]
        n *= 4
    return []


class FilteredGraphView:
    """A ``GraphView`` holding only the passing chunks, their entities and their relations (the
    entities and relations are read on first use: naive mode needs neither)."""

    def __init__(self, base: GraphView, passing_chunks: frozenset[str]) -> None:
        self.base = base
        self.allowed = passing_chunks
        self._chunk_ids = sorted(passing_chunks.intersection(base.chunk_ids()))
        self._entities: dict[str, list[str]] | None = None
        #: the weight each passing relation has from the passing chunks' records (None: the store's)
        self.weights: dict[tuple[str, str], float] | None = None
        self._relations: frozenset[tuple[str, str]] | None = None
        self._arrays: RelationArrays | None = None

    @property
    def _entity_chunks(self) -> dict[str, list[str]]:
        """Each entity a passing chunk mentions, with those chunks (sorted)."""
        if self._entities is None:
            mentions = self.base.chunk_entities(self._chunk_ids)
            entity_chunks: dict[str, list[str]] = {}
            for chunk_id in self._chunk_ids:
                for entity_id in mentions.get(chunk_id, ()):
                    entity_chunks.setdefault(entity_id, []).append(chunk_id)
            self._entities = entity_chunks
        return self._entities

    @property
    def relations(self) -> frozenset[tuple[str, str]]:
        if self._relations is None:
            self._relations = self._stated_relations()
        return self._relations

    def _stated_relations(self) -> frozenset[tuple[str, str]]:
        """Relations (``(smaller, larger)``) the passing chunks state, with the weight their records
        give (``relation_weights``); a store that lists only a chunk's relations (``chunk_relations``)
        keeps each relation's whole weight, and one that lists neither gives the pairs of entities a
        passing chunk mentions together."""
        weighed = getattr(self.base, "relation_weights", None)
        if weighed is not None:
            self.weights = weighed(self._chunk_ids)
            return frozenset(self.weights)
        listed = getattr(self.base, "chunk_relations", None)
        if listed is not None:
            stated = listed(self._chunk_ids).values()
            return frozenset((min(u, v), max(u, v)) for pairs in stated for u, v in pairs)
        mentions = self.base.chunk_entities(self._chunk_ids).values()
        return frozenset(pair for entities in mentions for pair in combinations(sorted(entities), 2))

    def _weight(self, pair: tuple[str, str], attrs: Mapping[str, Any]) -> float:
        """``pair``'s weight from the passing chunks (the store's ``attrs`` where it cannot say)."""
        return self.weights[pair] if self.weights is not None else float(attrs.get("weight", 1.0))

    def backs(self, entity_id: str) -> bool:
        """Whether a passing chunk mentions ``entity_id``."""
        return entity_id in self._entity_chunks

    def entity(self, entity_id: str) -> dict[str, Any] | None:
        if entity_id not in self._entity_chunks:
            return None
        found = self.base.entity(entity_id)
        if found is not None and "source_chunks" in found:
            found = {**found, "source_chunks": [c for c in found["source_chunks"] if c in self.allowed]}
        return found

    def relation_arrays(self) -> RelationArrays:
        """The passing relations among the passing entities, as arrays (built once)."""
        if self._arrays is None:
            pairs = sorted(self.relations)
            arrays = getattr(self.base, "relation_arrays", None)
            if arrays is not None:
                whole = arrays()
                attrs, max_neighbors = whole.edge_attrs(pairs), whole.max_neighbors
                types = {e: whole.types[whole.position[e]] for e in self._entity_chunks if e in whole.position}
                edge_attrs = whole.edge_attrs
            else:
                sub = self.base.entity_subgraph(sorted(self._entity_chunks), 0, len(self._entity_chunks))
                attrs = {(u, v): sub.edges[u, v] for u, v in pairs if sub.has_edge(u, v)}
                types = {e: str(sub.nodes[e].get("type", "")) for e in sub.nodes}
                max_neighbors = getattr(self.base, "max_neighbors", NetworkXGraphStore.MAX_NEIGHBORS)
                edge_attrs = lambda wanted: {p: attrs.get(p, {}) for p in wanted}  # noqa: E731
            ids = sorted(types)
            position = {e: i for i, e in enumerate(ids)}
            edges = _edge_columns([(position[u], position[v], self._weight((u, v), attrs[(u, v)]))
                                   for u, v in pairs if attrs.get((u, v)) and u in position and v in position])
            self._arrays = RelationArrays(ids, [types[e] for e in ids], edges, edge_attrs, max_neighbors, position)
        return self._arrays

    def entity_subgraph(self, seeds: Iterable[str], hops: int, max_nodes: int) -> nx.Graph:
        sub = self.relation_arrays().expand(seeds, hops, max_nodes)
        graph = nx.Graph()
        for node, hop, type_ in zip(sub.nodes, sub.hop, sub.types):
            graph.add_node(node, type=type_, hop=hop)
        pairs = [(sub.nodes[a], sub.nodes[b]) for a, b in zip(sub.left.tolist(), sub.right.tolist())]
        attrs = sub.edge_attrs(pairs)
        for (u, v), weight in zip(pairs, sub.weight.tolist()):
            graph.add_edge(u, v, **{**attrs.get((u, v), {}), "weight": weight})
        return graph

    def chunk_links(self, entity_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        wanted = [e for e in entity_ids if e in self._entity_chunks]
        return {e: {c: d for c, d in links.items() if c in self.allowed}
                for e, links in self.base.chunk_links(wanted).items()}

    def entity_chunk_ids(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        return {e: list(self._entity_chunks[e]) for e in entity_ids if e in self._entity_chunks}

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.base.chunks([c for c in chunk_ids if c in self.allowed])

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        return self.base.chunk_entities([c for c in chunk_ids if c in self.allowed])

    def subject_chunks(self, entity_ids: Iterable[str]) -> dict[str, list[str]]:
        wanted = [e for e in entity_ids if e in self._entity_chunks]
        found = {e: [c for c in chunks if c in self.allowed] for e, chunks in self.base.subject_chunks(wanted).items()}
        return {e: chunks for e, chunks in found.items() if chunks}

    def chunk_ids(self) -> list[str]:
        return list(self._chunk_ids)

    def type_pool(self, examples_per_type: int = 3) -> dict[str, list[str]]:
        return self.base.type_pool(examples_per_type)


class FilteredSources:
    """``RetrievalSources`` over ``base`` restricted to the chunks ``passing`` lets through."""

    def __init__(self, base: RetrievalSources, passing: Passing) -> None:
        self.base = base
        self.passing = passing
        self.embedder = base.embedder
        self.parallel_reads = getattr(base, "parallel_reads", False)
        self.graph = FilteredGraphView(base.graph, passing.chunks)
        self._rows: tuple[Any, np.ndarray, list[str], dict[str, int]] | None = None
        self._lexical: Any = None

    def _restrict(self, table: Mapping[str, float]) -> Mapping[str, float]:
        if not isinstance(table, ScoreTable):
            return {c: s for c, s in table.items() if c in self.passing.chunks}
        cached = self._rows  # the rows of a table over the same ids (an unchanged store) are kept
        if cached is None or cached[0] is not table.ids:
            ids = [c for c in self.graph.chunk_ids() if c in table.position]
            rows = np.array([table.position[c] for c in ids], dtype=np.int64)
            cached = self._rows = (table.ids, rows, ids, {c: i for i, c in enumerate(ids)})
        return ScoreTable(cached[2], table.scores[cached[1]], cached[3])

    def chunk_dense_scores(self, vector: np.ndarray) -> Mapping[str, float]:
        vectors = getattr(self.base, "vectors", None)
        if vectors is None or vectors.in_memory(CHUNKS):
            return self._restrict(self.base.chunk_dense_scores(vector))
        documents = self.passing.documents  # the store's search: passing documents only
        if len(documents) <= MAX_WHERE_DOCUMENTS:
            return self._restrict(vectors.chunk_similarities(vector, where={"doc_id": {"$in": sorted(documents)}}))
        share = max(len(self.graph.chunk_ids()), 1) / max(vectors.store.count(CHUNKS), 1)
        widening = min(MAX_WIDENING, max(1, round(1 / share)))
        return self._restrict(vectors.chunk_similarities(vector, n=vectors.ann_chunks * widening))

    def chunk_lexical_scores(self, query: str) -> Mapping[str, float]:
        if self._lexical is None:
            built = getattr(self.base, "lexical_index", None)
            whole = built() if built is not None else getattr(self.base, "lexical", None)
            self._lexical = whole.subset(self.graph.chunk_ids()) if whole is not None else False
        if self._lexical is False:
            return self._restrict(self.base.chunk_lexical_scores(query))
        table = self._lexical.table(query)
        return {} if table is None else table

    def entity_vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored name vectors of the passing entities among ``ids`` (the same as an index of
        the passing documents alone holds)."""
        stored = getattr(self.base, "entity_vectors", None)
        return stored([i for i in ids if self.graph.backs(i)]) if stored is not None else {}

    def nearest_entities(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        backs = self.graph.backs
        return nearest_passing(lambda n: self.base.nearest_entities(vector, n), k, lambda item: backs(item[0]))

    def nearest_relations(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        stated = self.graph.relations
        return nearest_passing(lambda n: self.base.nearest_relations(vector, n), k,
                               lambda item: (min(item[0], item[1]), max(item[0], item[1])) in stated)


def restricted(sources: RetrievalSources, passing: Passing) -> FilteredSources:
    """``sources`` seen through ``passing``; the view is kept on ``sources`` (its
    ``filtered_views``, emptied when the sources change) for the next query with that filter."""
    views: OrderedDict | None = getattr(sources, "filtered_views", None)
    if views is None:
        return FilteredSources(sources, passing)
    view = views.get(passing)
    if view is None:
        view = views[passing] = FilteredSources(sources, passing)
        while len(views) > KEPT_VIEWS:
            views.popitem(last=False)
    return view
