"""The graph-and-vectors writes: putting extracted chunks in (an insert's batch, or a retry of chunks
whose extraction had failed: ``indexing/failed_chunks.py``) and taking documents out."""

from __future__ import annotations

from typing import Any

from minirag_core.embedding.base import Embedder
from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.aliases import consolidate_for_store as consolidate_aliases
from minirag_core.indexing.batching import Entry
from minirag_core.indexing.registry import DocumentRegistry
from minirag_core.indexing.workers import PrecomputedEmbedder
from minirag_core.search.graph_vectors import sync_vectors
from minirag_core.search.vectors import CHUNKS, VectorIndex
from minirag_core.storage.base import Change, GraphStore
from minirag_core.types import Chunk, ExtractionResult


def add_extracted(graph_store: GraphStore, vectors: VectorIndex, embedder: Embedder, registry: DocumentRegistry,
                  chunks: list[Chunk], extractions: list[ExtractionResult], batch: list[Entry],
                  precomputed: dict[str, Any], *, index_relations: bool) -> None:
    """Add ``chunks`` with their extractions (a chunk already in the graph, without entities, gets
    them), register ``batch``'s documents, embed what changed and save. The caller holds the
    write locks."""
    entity_ids: set[str] = set()
    edge_ids: set[tuple[str, str]] = set()
    for extraction in extractions:
        found_entities, found_edges = graph_ops.extraction_ids(extraction)
        entity_ids |= found_entities
        edge_ids |= found_edges
    g = graph_store.working_graph([c.id for c in chunks], entity_ids, edge_ids)
    touched_entities: set[str] = set()
    touched_edges: set[tuple[str, str]] = set()
    for chunk, extraction in zip(chunks, extractions):
        graph_ops.add_chunk(g, chunk, extraction)
        for neighbour in g.neighbors(chunk.id):
            touched_entities.add(neighbour)
        touched_edges.update(tuple(e) for e in g.nodes[chunk.id]["relations"])
    for document, digest, doc_chunks, complete in batch:
        registry.add_chunks(document.id, [c.id for c in doc_chunks], digest if complete else "", document.metadata)
    moved = consolidate_aliases(graph_store, g, touched_entities, [c.id for c in chunks])
    touched_entities |= moved.entities
    touched_edges |= moved.edges
    if precomputed:  # what a worker embedded is not embedded again
        vectors.embedder = PrecomputedEmbedder(embedder, precomputed)
    try:
        sync_vectors(g, vectors, touched_entities, touched_edges, {c.id for c in chunks} | moved.chunks,
                     index_relations=index_relations)
    finally:
        vectors.embedder = embedder
    # new chunks only and nothing moved: the store may add them without rereading the rest
    added = None if moved.entities or moved.chunks or moved.edges or not batch else [c.id for c in chunks]
    graph_store.save(Change([c.id for c in chunks] + sorted(moved.chunks) + sorted(touched_entities),
                            touched_edges | moved.mentions, {"documents": [d.id for d, _, _, _ in batch]},
                            added_chunks=added))


def remove_documents(graph_store: GraphStore, vectors: VectorIndex, registry: DocumentRegistry, doc_ids: list[str],
                     *, index_relations: bool) -> tuple[list[str], list[str]]:
    """Remove the documents of ``doc_ids`` the registry holds and everything only they contributed;
    the ids removed and their chunk ids. The caller holds the write locks."""
    removed = [d for d in doc_ids if d in registry]
    chunk_ids = [c for d in removed for c in registry.chunk_ids(d)]
    g = graph_store.working_graph(chunk_ids)
    entities, edges = graph_ops.remove_chunks(g, chunk_ids)
    moved = consolidate_aliases(graph_store, g, entities)
    for d in removed:
        registry.remove(d)
    vectors.delete(CHUNKS, chunk_ids)
    sync_vectors(g, vectors, entities | moved.entities, edges | moved.edges, moved.chunks,
                 index_relations=index_relations)
    graph_store.save(Change(chunk_ids + sorted(moved.chunks) + sorted(entities | moved.entities),
                            edges | moved.edges | moved.mentions, {"documents": removed}))
    return removed, chunk_ids
