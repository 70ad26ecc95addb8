"""``MiniRAGIndex``: one workdir holding MiniRAG's graph, vectors and caches, kept correct under
incremental inserts and deletes, queried in mini, light or naive mode (files: docs/how_it_works.md)."""

from __future__ import annotations

import asyncio
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.aliases import consolidate_for_store as consolidate_aliases
from minirag_core.llm.answering import DEFAULT_RESPONSE_TYPE, Answer, aanswer_from, answer_from
from minirag_core.indexing.cached_extraction import extract_cached
from minirag_core.indexing.default_models import default_models
from minirag_core.extraction.page_structure import label_pages
from minirag_core.indexing.batching import INSERT_BATCH_CHUNKS, Entry, batch_chunks, iter_batches
from minirag_core.indexing.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS
from minirag_core.concurrency import ReadWriteLock
from minirag_core.indexing.documents import DEFAULT_MAX_DOCUMENT_BYTES, DocumentInput, InsertReport, content_hash, validate_documents
from minirag_core.embedding.base import Embedder
from minirag_core.extraction.base import Extractor, QueryMapper
from minirag_core.indexing.heap import release_freed_memory
from minirag_core.indexing.manifest import IndexSettingsMismatch, check_manifest, manifest
from minirag_core.indexing.progress import InsertProgress
from minirag_core.indexing.relation_vectors import MARKER_FILE, RelationVectorPolicy, embed_relation_vectors
from minirag_core.indexing.workers import PrecomputedEmbedder, Prepared, prepared_batches
from minirag_core.search.lexical import TOKENISER_KEY, tokenize
from minirag_core.search.graph_vectors import expected_vector_ids, repair_vectors, sync_vectors
from minirag_core.indexing.vector_sync import STATE_FILE, known_clean, mark_clean, mark_writing
from minirag_core.llm.base import LLMBackend
from minirag_core.llm.cache import LLMCallCache
from minirag_core.indexing.registry import DocumentRecord, DocumentRegistry
from minirag_core.retrieval.core_sources import CoreSources
from minirag_core.retrieval.pipeline import check_mode, retrieve
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.storage.base import Change, GraphStore, VectorStore
from minirag_core.storage.graph_stores import open_graph_store
from minirag_core.storage.token_cache import TokenCache
from minirag_core.types import Chunk, Document, ExtractionResult, QueryMapping, RetrievalResult
from minirag_core.indexing.workdir_lock import WorkdirLock
from minirag_core.search.vectors import CHUNKS, VectorIndex

__all__ = ["Answer", "CoreSources", "DocumentRecord", "IndexSettingsMismatch", "MiniRAGIndex"]

logger = logging.getLogger("minirag_core")

TOKENS_FILE = "lexical_tokens.sqlite"
TRIM_AFTER_GROWTH_BYTES = 64 << 20  # a write returns freed heap pages once RSS grew this much


class MiniRAGIndex:
    """MiniRAG's heterogeneous graph index with path-scored retrieval.

    With no ``llm`` it runs on the embedded default: the offline extractor and query mapper
    and the bundled all-MiniLM-L6-v2, so it needs no server. Give an ``llm`` (any
    ``LLMBackend``, e.g. ``OllamaBackend``) for model-based extraction, query mapping and
    answers; or pass ``extractor`` / ``query_mapper`` explicitly to mix the two. The graph is the
    embedded networkx store unless ``graph_backend="sqlite"`` (a file: the graph need not fit in
    memory), ``falkordb_url`` (``falkordb://HOST:PORT[/GRAPH]``) or a ``graph_store`` is given; a
    workdir reopens with the store it was built with. ``workers=N`` extracts and embeds in N
    processes (``worker_backend="ray"``: as tasks on the Ray cluster ``ray.init()`` reaches) while
    this process writes, with the same result (``indexing/workers.py``). Relation vectors,
    which only light mode searches, are embedded on the first light-mode query and kept current
    from then on; ``index_relations=True`` embeds them from the first write, ``False`` never
    (``indexing/relation_vectors.py``)."""

    def __init__(self, workdir: str | Path | None = None, *, embedder: Embedder | None = None,
                 llm: LLMBackend | None = None, extractor: Extractor | None = None,
                 query_mapper: QueryMapper | None = None, vector_store: VectorStore | None = None,
                 chroma_url: str | None = None, graph_store: GraphStore | None = None, falkordb_url: str | None = None,
                 graph_backend: str | None = None, chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                 chunk_overlap: int = DEFAULT_CHUNK_OVERLAP, settings: RetrievalSettings | None = None,
                 index_relations: bool | None = None, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
                 show_progress: bool = False, lock_timeout: float | None = None, workers: int = 1,
                 worker_backend: str = "process") -> None:
        self.workdir = Path(workdir) if workdir is not None else None
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
        if embedder is None:
            from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

            embedder = SentenceTransformerEmbedder()
        self.embedder = embedder
        self.llm = llm
        self.chunk_tokens, self.chunk_overlap = chunk_tokens, chunk_overlap
        self.settings = settings or RetrievalSettings()
        self.max_document_bytes = max_document_bytes
        self.show_progress = show_progress
        self.workers, self.worker_backend = workers, worker_backend
        check_manifest(self.workdir, manifest(embedder, chunk_tokens, chunk_overlap))
        self.llm_cache = LLMCallCache(self._path("llm_calls.jsonl"))
        self.extraction_cache = LLMCallCache(self._path("extractions.jsonl"))
        self.extractor, self.query_mapper = default_models(embedder, llm, self.llm_cache, self._path("type_vectors.npz"),
                                                           extractor, query_mapper)
        if vector_store is None:
            from minirag_core.storage.chroma_store import open_vector_store

            vector_store = open_vector_store(self.workdir, chroma_url)
        self.graph_store = graph_store or open_graph_store(self.workdir, falkordb_url, graph_backend)
        self.vectors = VectorIndex(vector_store, embedder)
        self._relations = RelationVectorPolicy(index_relations, self._path(MARKER_FILE), self.vectors)
        tokens_path = self._path(TOKENS_FILE)  # BM25 tokens kept as chunks are indexed
        self.token_cache = TokenCache(tokens_path, TOKENISER_KEY) if tokens_path is not None else None
        self.sources = CoreSources(self.graph_store, self.vectors, embedder, self.token_cache)
        self._rw = ReadWriteLock()
        self._type_pool: dict[str, list[str]] | None = None
        self._process_lock = WorkdirLock(self.workdir, lock_timeout) if self.workdir is not None else None
        # not while another process writes: mid-write, graph and vectors differ by design
        if self._process_lock is None or self._process_lock.try_acquire():
            try:
                self._repair_unless_clean()
            finally:
                if self._process_lock is not None:
                    self._process_lock.release()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the workdir's inter-process write lock, first catching up with what another
        process wrote since this one read the graph (so no writer overwrites another's work)."""
        if self._process_lock is None:
            yield
            return
        with self._process_lock:
            self._reload_if_changed()
            embed_relations = self._relations.at_write()  # first: repair checks the relations kept
            self._repair_unless_clean()  # a write that did not end, here or in another process
            if embed_relations:
                self._embed_relation_vectors()
            mark_writing(self._path(STATE_FILE))
            yield
            with self._rw.write():
                self.graph_store.settle()
            mark_clean(self._path(STATE_FILE), self.vectors.store)

    @property
    def index_relations(self) -> bool:
        """Whether writes embed relation vectors now (light mode's; ``indexing/relation_vectors.py``)."""
        return self._relations.kept

    def _ensure_relation_vectors(self) -> None:
        """Light mode searches relation vectors: with ``index_relations=None`` its first query
        embeds them, and every later write keeps them current."""
        if not self._relations.due_for_light_mode:
            return
        with self._writing():
            if self._relations.due_for_light_mode:  # another process may have embedded them meanwhile
                self._embed_relation_vectors()

    def _embed_relation_vectors(self) -> None:
        with self._rw.write():
            count = embed_relation_vectors(self.graph_store, self.vectors)
            self._relations.mark_kept()
            if count:
                logger.info("embedded %d relation texts for light mode; later writes keep them current", count)
            self._after_write()

    def _reload_if_changed(self) -> bool:
        with self._rw.write():
            if not self.graph_store.reload_if_changed():
                return False
            self.vectors.forget()
            self._after_write()
            return True

    def catch_up(self) -> bool:
        """Read what another process wrote since this one read the graph (True if it had), unless
        one is writing now: for a long-lived reader such as ``minirag serve``."""
        if self._process_lock is None or not self._process_lock.try_acquire():
            return False
        try:
            return self._reload_if_changed()
        finally:
            self._process_lock.release()

    # -- construction helpers ------------------------------------------------------------
    def _path(self, name: str) -> Path | None:
        return self.workdir / name if self.workdir is not None else None

    # -- registry ---------------------------------------------------------------------------
    @property
    def _documents(self) -> dict[str, dict[str, Any]]:
        """The registry in its stored form (a dict in the graph's attributes)."""
        return self.graph_store.documents()

    @property
    def registry(self) -> DocumentRegistry:
        """Typed view of the document registry (``DocumentRecord`` per document)."""
        return DocumentRegistry(self._documents)

    def document_ids(self) -> list[str]:
        return sorted(self._documents)

    def doc_metadata(self) -> dict[str, dict[str, Any]]:
        return self.registry.metadata()

    def stats(self) -> dict[str, int]:
        return {"documents": len(self._documents), **self.graph_store.stats()}

    # -- writes -------------------------------------------------------------------------------
    def insert(self, documents: Iterable[DocumentInput], *, show_progress: bool | None = None) -> InsertReport:
        """Add documents; unchanged ones are skipped, changed ones replaced. Only new chunks
        are extracted, in batches that are saved as they complete (a crash loses at most
        the batch under way, and re-running resumes)."""
        with self._writing():
            return self._insert(documents, show_progress)

    def _insert(self, documents: Iterable[DocumentInput], show_progress: bool | None) -> InsertReport:
        accepted, rejected = validate_documents(documents, max_bytes=self.max_document_bytes)
        report = InsertReport(rejected=rejected)
        for key, reason in rejected.items():
            logger.warning("document %s rejected: %s", key, reason)
        pending: list[tuple[Document, str]] = []
        for document in accepted:
            digest = content_hash(document.text)
            known = self.registry.get(document.id)
            if known is not None and known.hash == digest and known.metadata == document.metadata:
                report.unchanged.append(document.id)
                continue
            if known is not None:  # changed, or left unfinished by an interrupted run
                self.delete([document.id])
                report.updated.append(document.id)
            else:
                report.inserted.append(document.id)
            pending.append((document, digest))
        progress = InsertProgress([d for d, _ in pending], self.show_progress if show_progress is None
                                  else show_progress)
        labels = label_pages({d.id: d.text for d in accepted})  # where each reST :ref: label leads
        batches = iter_batches(pending, self.embedder, chunk_tokens=self.chunk_tokens, chunk_overlap=self.chunk_overlap,
                               batch_chunks=INSERT_BATCH_CHUNKS, ref_labels=labels)
        with prepared_batches(batches, batch_chunks, self._extract, extractor=self.extractor, embedder=self.embedder,
                              cache=self.extraction_cache, workers=self.workers, backend=self.worker_backend,
                              index_relations=self.index_relations) as prepared:
            for batch, ready in prepared:
                self._insert_batch(batch, ready, report)
                progress.update(batch)
        progress.close()
        return report

    def _extract(self, chunks: list[Chunk]) -> list[ExtractionResult | None]:
        return extract_cached(self.extractor, self.extraction_cache, chunks)

    def _insert_batch(self, batch: list[Entry], prepared: Prepared, report: InsertReport) -> None:
        """Add and save an extracted batch: whole documents and pieces of long ones (``complete``
        False until a document's last piece; an unfinished one has no hash, so a re-run redoes it)."""
        chunks = batch_chunks(batch)
        found = prepared.extractions
        for chunk, extraction in zip(chunks, found):
            if extraction is None:
                report.failed_chunks[chunk.id] = chunk.doc_id
        extractions = [e if e is not None else ExtractionResult() for e in found]
        entity_ids: set[str] = set()
        edge_ids: set[tuple[str, str]] = set()
        for extraction in extractions:
            found_entities, found_edges = graph_ops.extraction_ids(extraction)
            entity_ids |= found_entities
            edge_ids |= found_edges
        with self._rw.write():
            g = self.graph_store.working_graph([c.id for c in chunks], entity_ids, edge_ids)
            touched_entities: set[str] = set()
            touched_edges: set[tuple[str, str]] = set()
            for chunk, extraction in zip(chunks, extractions):
                graph_ops.add_chunk(g, chunk, extraction)
                for neighbour in g.neighbors(chunk.id):
                    touched_entities.add(neighbour)
                touched_edges.update(tuple(e) for e in g.nodes[chunk.id]["relations"])
            for document, digest, doc_chunks, complete in batch:
                self.registry.add_chunks(document.id, [c.id for c in doc_chunks], digest if complete else "",
                                         document.metadata)
            moved = consolidate_aliases(self.graph_store, g, touched_entities, [c.id for c in chunks])
            touched_entities |= moved.entities
            touched_edges |= moved.edges
            if prepared.vectors:  # what a worker embedded is not embedded again
                self.vectors.embedder = PrecomputedEmbedder(self.embedder, prepared.vectors)
            try:
                sync_vectors(g, self.vectors, touched_entities, touched_edges, {c.id for c in chunks} | moved.chunks,
                             index_relations=self.index_relations)
            finally:
                self.vectors.embedder = self.embedder
            added = None if moved.entities or moved.chunks or moved.edges else [c.id for c in chunks]  # moves: whole
            self.graph_store.save(Change([c.id for c in chunks] + sorted(moved.chunks) + sorted(touched_entities),
                                         touched_edges | moved.mentions, {"documents": [d.id for d, _, _, _ in batch]},
                                         added_chunks=added))
            self._after_write()
        if self.token_cache is not None:  # after the save: a crash before leaves them to the first query
            self.token_cache.put(dict(zip([c.id for c in chunks], tokenize([c.text for c in chunks]))))
        report.chunks += len(chunks)
        report.unparsed_records += sum(e.unparsed_records for e in extractions)

    def delete(self, doc_ids: str | Sequence[str]) -> list[str]:
        """Remove documents and everything only they contributed; returns the ids removed."""
        ids = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))  # an id named twice: once
        with self._writing(), self._rw.write():
            registry = self.registry
            removed = [d for d in ids if d in registry]
            chunk_ids = [c for d in removed for c in registry.chunk_ids(d)]
            g = self.graph_store.working_graph(chunk_ids)
            entities, edges = graph_ops.remove_chunks(g, chunk_ids)
            moved = consolidate_aliases(self.graph_store, g, entities)
            for d in removed:
                registry.remove(d)
            self.vectors.delete(CHUNKS, chunk_ids)
            sync_vectors(g, self.vectors, entities | moved.entities, edges | moved.edges, moved.chunks,
                         index_relations=self.index_relations)
            self.graph_store.save(Change(chunk_ids + sorted(moved.chunks) + sorted(entities | moved.entities),
                                         edges | moved.edges | moved.mentions, {"documents": removed}))
            self._after_write()
            if self.token_cache is not None:
                self.token_cache.drop(chunk_ids)
        return removed

    def _after_write(self) -> None:
        self.graph_store.changed()
        self._type_pool = None
        self.sources.invalidate()
        release_freed_memory(TRIM_AFTER_GROWTH_BYTES)  # else a long build's RSS keeps every batch's freed buffers

    def expected_vector_ids(self) -> dict[str, set[str]]:
        """The ids each collection must hold to agree with the graph."""
        return expected_vector_ids(self.graph_store, index_relations=self.index_relations)

    def _repair_unless_clean(self) -> None:
        """Repair unless the last write ended cleanly (``indexing/vector_sync.py``); the caller holds the
        workdir lock."""
        if not known_clean(self._path(STATE_FILE), self.vectors.store):
            self.repair()

    def repair(self) -> dict[str, int]:
        """Make Chroma agree with the graph (after a crash between the two writes)."""
        with self._rw.write():
            fixed = repair_vectors(self.graph_store, self.vectors, index_relations=self.index_relations)
            if any(fixed.values()):
                logger.warning("repaired vectors to match the graph: %s", fixed)
                self.graph_store.save()
            self._after_write()
            mark_clean(self._path(STATE_FILE), self.vectors.store)
        return fixed

    # -- reads ---------------------------------------------------------------------------------
    def type_pool(self) -> dict[str, list[str]]:
        pool = self._type_pool
        if pool is None:
            # Under the read lock: computed outside it, a pool read from the graph before a
            # concurrent insert could be stored after that insert reset the cache, and stay
            # stale until the next write. (Callers must not already hold the read lock.)
            with self._rw.read():
                pool = self._type_pool
                if pool is None:
                    pool = self._type_pool = self.graph_store.type_pool()
        return pool

    def map_query(self, query: str) -> QueryMapping:
        return self.query_mapper.map_query(query, self.type_pool())

    async def amap_query(self, query: str) -> QueryMapping:
        return await self.query_mapper.amap_query(query, self.type_pool())

    def _retrieve(self, query: str, mode: str, mapping: QueryMapping | None,
                  settings: RetrievalSettings) -> RetrievalResult:
        with self._rw.read():
            return retrieve(self.sources, query, mode, settings, mapping=mapping,
                            doc_metadata=self.registry.metadata_view())

    def query(self, query: str, *, mode: str = "mini", **overrides: Any) -> RetrievalResult:
        """Retrieve for ``query``; keyword overrides change ``RetrievalSettings`` for this call."""
        settings = self._plan(query, mode, overrides)
        if mode == "light":
            self._ensure_relation_vectors()
        mapping = None if mode == "naive" else self.map_query(query)
        return self._retrieve(query, mode, mapping, settings)

    async def aquery(self, query: str, *, mode: str = "mini", **overrides: Any) -> RetrievalResult:
        settings = self._plan(query, mode, overrides)
        if mode == "light":
            await asyncio.to_thread(self._ensure_relation_vectors)
        mapping = None if mode == "naive" else await self.amap_query(query)
        return await asyncio.to_thread(self._retrieve, query, mode, mapping, settings)

    def _plan(self, query: str, mode: str, overrides: dict[str, Any]) -> RetrievalSettings:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        check_mode(mode)
        return self.settings.with_overrides(**overrides)

    def answer(self, query: str, *, mode: str = "mini", response_type: str = DEFAULT_RESPONSE_TYPE,
               **overrides: Any) -> Answer:
        """Answer with the ``minirag_response`` prompt; without a model, return the context."""
        return answer_from(self.llm, query, self.query(query, mode=mode, **overrides), response_type)

    async def aanswer(self, query: str, *, mode: str = "mini", response_type: str = DEFAULT_RESPONSE_TYPE,
                      **overrides: Any) -> Answer:
        result = await self.aquery(query, mode=mode, **overrides)
        return await aanswer_from(self.llm, query, result, response_type)
