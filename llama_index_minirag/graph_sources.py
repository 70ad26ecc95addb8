"""``PropertyGraphSources``: the core's ``RetrievalSources`` over a LlamaIndex ``PropertyGraphStore``.

Reads a graph written by :class:`~llama_index_minirag.extractor.MiniRAGExtractor` through the
store's :class:`~llama_index_minirag.store_access.StoreAccess` (the generic interface for the
in-memory store, the store's own query language where ``get_triplets`` loses MiniRAG's
records), rebuilds from the per-chunk records the same heterogeneous graph the core builds,
chunk subjects and homed short names included (with the core's ``graph.add_chunk`` and
``aliases.consolidate``, held in the core's ``NetworkXGraphStore`` as the ``GraphView``), and
searches it with the core's ``InMemorySources`` (entity-name, chunk and relation vectors
embedded with a core ``Embedder``, BM25 over chunk texts). The snapshot is rebuilt when the
store changes; vectors of texts seen before are reused (and, with ``vector_cache=``, kept
across processes), so a rebuild after an insert embeds only the new texts.

A query does not read the graph when nothing was written since the last snapshot: writes
through the store object are journalled (``store_watch``), and stores on a server or on disk
keep a version (one small query) that writes from other processes change. After inserts of new
chunks through the object it reads only their neighbourhood and extends a copy of the
snapshot. After any other change (a delete, a chunk written again, a write the journal does
not explain) the whole graph is read and fingerprinted (node / relation ids, chunk texts) to
tell whether the snapshot must be rebuilt. ``invalidate()`` forgets the snapshot;
``watch_writes=False`` reads the graph for every query on stores without a version.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from typing import Any, Iterable

import networkx as nx
import numpy as np
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, PropertyGraphStore
from llama_index.core.schema import BaseNode, TextNode
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.aliases import consolidate, full_form, short_form
from minirag_core.graph.records import holds_aliases
from minirag_core.embedding.base import Embedder
from minirag_core.graph.names import normalize_entity_name
from minirag_core.retrieval.memory_sources import InMemorySources, embed_graph
from minirag_core.storage.networkx_store import NetworkXGraphStore
from minirag_core.types import Chunk, ExtractedEntity, ExtractedRelation, ExtractionResult

from .adapters import as_core_embedder
from .build_vectors import built_vectors
from .extractor import MENTIONED_IN, RELATED
from .store_access import StoreAccess
from .store_readers import access_for
from .store_watch import Write, explained, watch, watched_access, write_count, writes_since

__all__ = ["PropertyGraphSources", "GraphSnapshot"]

#: node properties the index adds to chunk nodes (not the user's document metadata)
_INTERNAL_KEYS = {"_node_content", "_node_type", "document_id", "doc_id", "ref_doc_id", "triplet_source_id"}


class GraphSnapshot(InMemorySources):
    """One consistent view of the store: the core's ``InMemorySources`` over the rebuilt graph
    (``graph`` is a core ``NetworkXGraphStore``, hence a ``GraphView``), plus the store's
    LlamaIndex nodes and document metadata."""

    def __init__(self, graph: NetworkXGraphStore, embedder: Embedder, vectors: dict[str, np.ndarray],
                 llama_nodes: dict[str, BaseNode], doc_metadata: dict[str, dict[str, Any]], signature: str) -> None:
        super().__init__(graph, embedder, vectors)
        self.llama_nodes = llama_nodes
        self.doc_metadata = doc_metadata
        self.signature = signature


def may_move_aliases(graph: nx.Graph, records: list[tuple[ChunkNode, ExtractionResult]]) -> bool:
    """Whether adding ``records`` to ``graph`` could make alias consolidation move a record: a
    name they add is a short form ("Lovelace", "A. Lovelace") or a full name whose surname the
    other kind also has (the pairs ``aliases.consolidate`` homes together), in the graph or among them."""
    added = {normalize_entity_name(e.name) for _, extraction in records for e in extraction.entities}
    surnames = {n.split()[-1] for n in added if n and (short_form(n) or full_form(n))}
    if not surnames:
        return False
    shorts: set[str] = set()  # surnames with a short form (or short-form records homed at a full name)
    fulls: set[str] = set()
    entities = {n: a for n, a in graph.nodes(data=True) if a["kind"] == graph_ops.ENTITY}
    for node_id in [*entities, *sorted(added)]:
        surname = node_id.split()[-1] if node_id.split() else ""
        if surname in surnames:
            if short_form(node_id) or (node_id in entities and holds_aliases(entities[node_id])):
                shorts.add(surname)
            if full_form(node_id):
                fulls.add(surname)
    return bool(shorts & fulls)


class PropertyGraphSources:
    """MiniRAG's ``RetrievalSources`` (and, via ``.graph``, ``GraphView``) over a
    ``PropertyGraphStore`` filled by :class:`MiniRAGExtractor`.

    ``embed_model``: a core ``Embedder`` or a LlamaIndex ``BaseEmbedding`` (default: the
    bundled all-MiniLM-L6-v2, the core's default, so results match a core index).
    Use :meth:`snapshot` for one consistent view per query; the protocol methods on this
    object delegate to the current snapshot.
    """

    def __init__(self, graph_store: PropertyGraphStore, embed_model: Any = None, *,
                 relation_label: str = RELATED, mention_label: str = MENTIONED_IN,
                 watch_writes: bool = True, vector_cache: Any = None) -> None:
        """``vector_cache``: keep the graph's vectors across processes - a folder, a Chroma
        collection or a LlamaIndex ``ChromaVectorStore`` (of its own), see
        :class:`~llama_index_minirag.vector_cache.ChromaVectorCache`."""
        self.graph_store = graph_store
        self._watching = watch_writes and watch(graph_store, access_for(graph_store, mention_label, relation_label))
        self.access: StoreAccess = (watched_access(graph_store) if self._watching
                                    else access_for(graph_store, mention_label, relation_label))
        self._seen_writes: int | None = None
        self._seen_version: str | None = None
        self.embedder: Embedder = as_core_embedder(embed_model)
        self.relation_label = relation_label
        self.mention_label = mention_label
        self._lock = threading.Lock()
        self._snapshot: GraphSnapshot | None = None
        self._vectors: Any = {}
        self._mapper: Any = None
        if vector_cache is not None:
            from .vector_cache import ChromaVectorCache

            self._vectors = ChromaVectorCache(vector_cache, self.embedder.name)

    @property
    def keeps_vectors(self) -> bool:
        """Whether the graph's vectors are kept across processes (``vector_cache=``)."""
        return hasattr(self._vectors, "flush")

    def __repr__(self) -> str:
        return f"PropertyGraphSources(store={type(self.graph_store).__name__}, embedder={self.embedder.name!r})"

    def offline_query_mapper(self) -> Any:
        """The core's offline query mapper over this object's embedder, built once and owned
        here (its type vectors are embedded once; mapping a query does not change its state)."""
        with self._lock:
            if self._mapper is None:
                from minirag_core.retrieval.query.offline_mapping import OfflineQueryMapper

                self._mapper = OfflineQueryMapper(self.embedder)
            return self._mapper

    def share_vectors(self, cache: dict[str, np.ndarray]) -> None:
        """Use ``cache`` (text -> vector, same embedding model) as this object's vector cache,
        e.g. to share it with other sources over the same store (ignored with ``vector_cache=``)."""
        with self._lock:
            if self.keeps_vectors:
                return
            cache.update(self._vectors)
            self._vectors = cache

    # -- reading the store ---------------------------------------------------------------
    def _read(self) -> tuple[list[Any], list[Any], str]:
        nodes, triplets = self.access.read_all()
        # order-independent fingerprint of the node ids, labels, chunk texts and relation ids
        # (in-process only)
        fingerprint = sum(hash((type(n).__name__, n.id, n.label, getattr(n, "text", None))) for n in nodes)
        fingerprint += sum(hash((s.id, r.label, t.id)) for s, r, t in triplets)
        return nodes, triplets, f"{len(nodes)}:{len(triplets)}:{fingerprint & 0xFFFFFFFFFFFFFFFF:x}"

    def invalidate(self) -> None:
        """Forget the snapshot (the next query reads the store and rebuilds it): after writes
        that bypassed the store object, or that changed no node or relation id."""
        with self._lock:
            self._snapshot = None

    def snapshot(self) -> GraphSnapshot:
        """The current view of the store, rebuilt if the store changed since the last one (read
        only when a write went through the store object since then, when the store's version
        moved, or when neither can be told)."""
        with self._lock:
            writes = write_count(self.graph_store) if self._watching else None
            version = self.access.version() if self.access.versioned else None
            if self._snapshot is not None and self._seen_version == version:
                if version is not None and writes is None:  # not watching: the version tells
                    return self._snapshot
                if writes is not None and self._seen_writes is not None:
                    if writes == self._seen_writes:
                        return self._snapshot
            if self._snapshot is not None and writes is not None and self._seen_writes is not None:
                since = writes_since(self.graph_store, self._seen_writes)
                if since is not None and explained(self._seen_version, since, version):
                    extended = self._extend(self._snapshot, since)
                    if extended is not None:
                        self._snapshot, self._seen_writes = extended, self._seen_writes + len(since)
                        self._seen_version = version
                        return extended
            nodes, triplets, signature = self._read()
            if self._snapshot is None or self._snapshot.signature != signature:
                self._snapshot = self._build(nodes, triplets, signature)
            # both taken before reading: a write meanwhile shows next time
            self._seen_writes, self._seen_version = writes, version
            return self._snapshot

    def _records(self, nodes: list[Any], triplets: list[Any]) -> list[tuple[ChunkNode, ExtractionResult]]:
        """Each chunk node (in the store's order) with the extraction its relations record."""
        chunk_nodes = {n.id: n for n in nodes if isinstance(n, ChunkNode)}
        entity_nodes = {n.id: n for n in nodes if isinstance(n, EntityNode)}
        entities: dict[str, list[tuple[int, ExtractedEntity]]] = defaultdict(list)
        relations: dict[str, list[ExtractedRelation]] = defaultdict(list)
        stashed: dict[str, list[tuple[tuple[int, int], ExtractedRelation]]] = defaultdict(list)
        stash_seen: set[str] = set()
        subjects: dict[str, list[tuple[int, str]]] = defaultdict(list)
        fallback_relations: list[tuple[Any, Any, Any]] = []
        for source, relation, target in triplets:
            props = relation.properties or {}
            if relation.label == self.mention_label:
                if target.id not in chunk_nodes:
                    continue
                entity = entity_nodes.get(source.id, source)
                name = str(props.get("entity_name") or getattr(entity, "name", source.id))
                entity_type = props.get("entity_type")
                if entity_type is None:
                    entity_type = entity.properties.get("entity_type", entity.label)
                entities[target.id].append((int(props.get("position", 0)), ExtractedEntity(
                    name=name, type=str(entity_type), description=str(props.get("description", "")))))
                if props.get("subject"):
                    subjects[target.id].append((int(props.get("position", 0)), name))
                if "chunk_relations" in props:
                    stash_seen.add(target.id)
                    for i, (other, description, keywords, weight) in enumerate(json.loads(props["chunk_relations"])):
                        stashed[target.id].append(((int(props.get("position", 0)), i), ExtractedRelation(
                            source=name, target=other, description=description, keywords=keywords,
                            weight=float(weight))))
            elif relation.label == self.relation_label:
                fallback_relations.append((source, relation, target))
        for chunk_id, found in stashed.items():  # in the extraction's order, whatever the store's
            relations[chunk_id] = [r for _, r in sorted(found, key=lambda pr: pr[0])]
        # stores without the stash (or graphs from an older writer): use the relations as stored,
        # attributed to the chunk that wrote them
        fallback_relations.sort(key=lambda t: (t[0].id, t[2].id))
        for source, relation, target in fallback_relations:
            props = relation.properties or {}
            chunk_id = props.get("triplet_source_id")
            if chunk_id in chunk_nodes and chunk_id not in stash_seen:
                relations[chunk_id].append(ExtractedRelation(
                    source=getattr(source, "name", source.id), target=getattr(target, "name", target.id),
                    description=str(props.get("description", "")), keywords=str(props.get("keywords", "")),
                    weight=float(props.get("weight", 1.0))))
        records = []
        for chunk_id, chunk_node in chunk_nodes.items():
            # resolve relation endpoints named by entity id to that chunk's display name
            names = {normalize_entity_name(e.name): e.name for _, e in entities.get(chunk_id, [])}
            records.append((chunk_node, ExtractionResult(
                entities=[e for _, e in sorted(entities.get(chunk_id, []), key=lambda pe: pe[0])],
                relations=[ExtractedRelation(r.source, names.get(r.target, r.target), r.description, r.keywords,
                                             r.weight) for r in relations.get(chunk_id, [])],
                subject_entities=[n for _, n in sorted(subjects.get(chunk_id, []))])))
        return records

    def _snapshot_of(self, g: nx.Graph, records: list[tuple[ChunkNode, ExtractionResult]],
                     llama_nodes: dict[str, BaseNode], doc_metadata: dict[str, dict[str, Any]],
                     signature: str, shared: bool = False) -> GraphSnapshot:
        """Add ``records`` to ``g`` (chunks in the store's order, as in the core, so ties among
        equally frequent names in the type pool break the same way) and search the result.
        ``shared``: ``g`` is a copy of another snapshot's graph, whose per-chunk records it
        shares until they are copied here (once per entity or edge a record changes)."""
        copied: set[Any] = set()
        for chunk_node, extraction in records:
            if shared:
                entity_ids, edges = graph_ops.extraction_ids(extraction)
                for item in [e for e in entity_ids if e in g and e not in copied]:
                    g.nodes[item]["sources"] = dict(g.nodes[item]["sources"])
                    copied.add(item)
                for item in [e for e in edges if g.has_edge(*e) and e not in copied]:
                    g.edges[item]["sources"] = dict(g.edges[item]["sources"])
                    copied.add(item)
            llama = self._llama_node(chunk_node)
            llama_nodes[chunk_node.id] = llama
            doc_id = llama.ref_doc_id or chunk_node.id
            doc_metadata.setdefault(doc_id, dict(llama.metadata))
            text = chunk_node.text
            chunk = Chunk(id=chunk_node.id, doc_id=doc_id, order=int(llama.start_char_idx or 0), text=text,
                          n_tokens=self.embedder.count_tokens(text))
            graph_ops.add_chunk(g, chunk, extraction)
        if not shared:  # one person's short and full names, homed at one node as the core does
            consolidate(g, [n for n, a in g.nodes(data=True) if a["kind"] == graph_ops.ENTITY],
                        [c.id for c, _ in records])
        store = NetworkXGraphStore(None)
        store.graph = g
        # self._vectors is possibly shared with other sources over the same store
        vectors = embed_graph(g, self.embedder, self._vectors, built_vectors(self.embedder.name))
        if self.keeps_vectors:
            self._vectors.flush()
        return GraphSnapshot(store, self.embedder, vectors, llama_nodes, doc_metadata, signature)

    def _build(self, nodes: list[Any], triplets: list[Any], signature: str) -> GraphSnapshot:
        return self._snapshot_of(nx.Graph(), self._records(nodes, triplets), {}, {}, signature)

    def _extend(self, snapshot: GraphSnapshot, writes: list[Write]) -> GraphSnapshot | None:
        """``snapshot`` plus the chunks ``writes`` inserted, reading only their neighbourhood
        (the chunk nodes and their relations); None when the writes did anything else (a
        delete, a chunk written again, a mention of an older chunk): read the whole store."""
        if not all(w.known for w in writes):
            return None
        new_chunks = list(dict.fromkeys(c for w in writes for c in w.chunks))
        known = snapshot.graph.graph
        if any(c in known for c in new_chunks):
            return None
        mentions = [(s, t) for w in writes for label, s, t in w.relations if label == self.mention_label]
        if any(t not in new_chunks for _, t in mentions):
            return None
        if not new_chunks:  # nothing a snapshot holds was written (entity nodes only, or nothing)
            return snapshot
        touched = sorted(set(new_chunks) | {s for s, _ in mentions})
        nodes, triplets = self.access.read_chunks(new_chunks, touched)
        chunk_set = set(new_chunks)
        triplets = [t for t in triplets if t[2].id in chunk_set
                    or (t[1].properties or {}).get("triplet_source_id") in chunk_set]
        by_id = {n.id: n for n in nodes}
        ordered = [by_id[c] for c in new_chunks if c in by_id]
        records = self._records(ordered, triplets)
        if may_move_aliases(known, records):  # consolidation may re-home older chunks' records
            return None
        return self._snapshot_of(known.copy(), records, dict(snapshot.llama_nodes),
                                 {k: dict(v) for k, v in snapshot.doc_metadata.items()},
                                 f"{snapshot.signature}+{len(new_chunks)}", shared=True)

    @staticmethod
    def _llama_node(chunk_node: ChunkNode) -> BaseNode:
        """The original LlamaIndex node of a chunk (metadata, relationships), or a TextNode."""
        try:
            node = metadata_dict_to_node(dict(chunk_node.properties))
            node.set_content(chunk_node.text)
            node.id_ = chunk_node.id
            return node
        except Exception:  # noqa: BLE001 - chunk nodes written by something else
            metadata = {k: v for k, v in (chunk_node.properties or {}).items() if k not in _INTERNAL_KEYS}
            return TextNode(id_=chunk_node.id, text=chunk_node.text, metadata=metadata)

    # -- RetrievalSources, delegating to the current snapshot --------------------------------
    @property
    def graph(self) -> NetworkXGraphStore:
        return self.snapshot().graph

    def nearest_entities(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        return self.snapshot().nearest_entities(vector, k)

    def chunk_dense_scores(self, vector: np.ndarray) -> dict[str, float]:
        return self.snapshot().chunk_dense_scores(vector)

    def chunk_lexical_scores(self, query: str) -> dict[str, float]:
        return self.snapshot().chunk_lexical_scores(query)

    def nearest_relations(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        return self.snapshot().nearest_relations(vector, k)

    def doc_metadata(self) -> dict[str, dict[str, Any]]:
        return self.snapshot().doc_metadata

    def type_pool(self) -> dict[str, list[str]]:
        return self.snapshot().type_pool()

    def stats(self) -> dict[str, int]:
        return self.snapshot().graph.stats()

    def llama_nodes(self, chunk_ids: Iterable[str]) -> list[BaseNode]:
        snap = self.snapshot()
        return [snap.llama_nodes[c] for c in chunk_ids if c in snap.llama_nodes]
