"""Each chunk's graph term (Sec. 3.2.2): the eq. 3 scores of the paths through the entities it
mentions, each entity's share weighted by its specificity (idf), and the entities that link the
chunk to the query (hubs aside). Also sets each path's ``specificity``.

``graph_terms`` runs on a store's link arrays (``link_arrays()``) where it has them, else on its
``entity_chunk_ids``; both give the same scores, summed in the same order.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from typing import Any

import numpy as np

from minirag_core.graph.arrays import ChunkLinks
from minirag_core.retrieval.topology.batch_paths import PathTable
from minirag_core.retrieval.topology.chunk_ranking import (HUB_MIN_CHUNKS, HUB_SHARE, hub_entities, relative_values,
                                                           specificity)
from minirag_core.types import ReasoningPath

#: (graph term per chunk, the entities linking each chunk to the query)
GraphTerms = tuple[dict[str, float], "defaultdict[str, list[str]]"]


def graph_terms(graph: Any, paths: list[ReasoningPath], n_chunks: int, use_idf: bool,
                table: PathTable | None = None, names: list[str] | None = None) -> GraphTerms:
    """The graph term of every chunk the ``paths`` reach, among ``n_chunks`` chunks. ``table``
    (the paths as arrays, numbered into ``names``) lets a store with link arrays skip Python loops."""
    arrays = getattr(graph, "link_arrays", None)
    if arrays is not None and table is not None and names is not None:
        return graph_terms_on_arrays(arrays(), paths, table, names, n_chunks, use_idf)
    return graph_terms_on_lists(graph, paths, n_chunks, use_idf)


def graph_terms_on_lists(graph: Any, paths: list[ReasoningPath], n_chunks: int, use_idf: bool) -> GraphTerms:
    """``graph_terms`` from the store's ``entity_chunk_ids``."""
    links = graph.entity_chunk_ids(sorted({n for p in paths for n in p.nodes}))
    hubs, relative = hub_entities(links, n_chunks)
    for path in paths:
        path.specificity = min((relative.get(n, 1.0) for n in path.nodes), default=1.0)
    entity_score: dict[str, float] = defaultdict(float)
    for path in paths:
        for node in set(path.nodes):
            entity_score[node] += path.score
    graph_scores: dict[str, float] = defaultdict(float)
    chunk_entities: defaultdict[str, list[str]] = defaultdict(list)
    for entity, chunks in links.items():
        link_weight = specificity(len(chunks), n_chunks, use_idf)
        for chunk_id in chunks:
            graph_scores[chunk_id] += entity_score[entity] * link_weight
            if entity not in hubs:  # a hub links every chunk to the query: it explains none
                chunk_entities[chunk_id].append(entity)
    return graph_scores, chunk_entities


def graph_terms_on_arrays(links: ChunkLinks, paths: list[ReasoningPath], table: PathTable, names: list[str],
                          n_chunks: int, use_idf: bool) -> GraphTerms:
    """``graph_terms_on_lists`` on link arrays: the same sums, added in the same order (entities
    in id order, each path's score in path order), so the same floats."""
    on_path = table.nodes >= 0
    local = np.flatnonzero(np.bincount(table.nodes[on_path], minlength=len(names)))  # path entities, in id order
    rows = np.array([links.entity_position.get(names[i], -1) for i in local.tolist()], dtype=np.int64)
    known = rows >= 0
    local, rows = local[known], rows[known]
    counts = links.counts[rows]
    relative = np.ones(len(names) + 1, dtype=np.float64)  # the last: padding, above every value
    relative[local] = relative_values(counts, n_chunks)
    relative[-1] = np.inf
    if len(table.nodes):
        for path, value in zip(paths, relative[table.nodes].min(axis=1).tolist()):
            path.specificity = value
    entity_score = np.bincount(table.nodes[on_path], minlength=len(names),
                               weights=np.broadcast_to(table.scores[:, None], table.nodes.shape)[on_path])
    distinct, inverse = np.unique(counts, return_inverse=True)
    link_weight = np.array([specificity(n, n_chunks, use_idf) for n in distinct.tolist()],
                           dtype=np.float64)[inverse.reshape(-1)]
    starts = links.indptr[rows]
    owner = np.repeat(np.arange(len(rows)), counts)
    entries = starts[owner] + np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    chunks = links.indices[entries]
    sums = np.bincount(chunks, weights=(entity_score[local] * link_weight)[owner], minlength=len(links.chunk_ids))
    chunk_ids = links.chunk_ids
    touched = np.flatnonzero(np.bincount(chunks, minlength=len(chunk_ids)))
    graph_scores = dict(zip([chunk_ids[c] for c in touched.tolist()], sums[touched].tolist()))
    explaining = counts[owner] <= max(HUB_MIN_CHUNKS, HUB_SHARE * n_chunks)  # a hub explains no chunk
    by_chunk = np.argsort(chunks[explaining], kind="stable")  # each chunk's entities stay in id order
    entity_names = np.array([names[i] for i in local.tolist()], dtype=object)
    return graph_scores, LinkingEntities(links, chunks[explaining][by_chunk],
                                         entity_names[owner[explaining][by_chunk]] if len(by_chunk) else [])


class LinkingEntities(defaultdict):
    """Each chunk's linking entities as ``graph_terms_on_lists`` lists them, worked out for a
    chunk when first asked for: a query reads a few dozen of the chunks its paths reach."""

    def __init__(self, links: ChunkLinks, chunks: np.ndarray, entities: Any) -> None:
        """``chunks``: chunk positions in ``links`` (sorted), ``entities``: the entity of each."""
        super().__init__(list)
        self._position, self._chunks, self._entities = links.chunk_position, chunks.tolist(), list(entities)

    def _linked(self, chunk_id: str) -> list[str]:
        row = self._position.get(chunk_id)
        if row is None:
            return []
        return self._entities[bisect_left(self._chunks, row):bisect_right(self._chunks, row)]

    def __missing__(self, chunk_id: str) -> list[str]:
        found = self[chunk_id] = self._linked(chunk_id)
        return found

    def get(self, chunk_id: str, default: Any = None) -> Any:  # type: ignore[override]
        if chunk_id in self:
            return self[chunk_id]
        found = self._linked(chunk_id)
        if not found:
            return default
        self[chunk_id] = found
        return found
