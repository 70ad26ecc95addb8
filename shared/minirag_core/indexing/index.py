"""``MiniRAGIndex``: one workdir holding MiniRAG's graph, vectors and caches, kept correct under
incremental inserts and deletes, queried in mini, light or naive mode (files: docs/how_it_works.md)."""

from __future__ import annotations

import asyncio
import logging
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from minirag_core.llm.answering import DEFAULT_RESPONSE_TYPE, Answer, aanswer_from, answer_from
from minirag_core.indexing.default_models import default_models
from minirag_core.indexing.failed_chunks import FAILED_FILE, FailedChunks, retry_failed
from minirag_core.indexing.graph_writes import add_extracted, remove_documents
from minirag_core.extraction.page_structure import label_pages
from minirag_core.indexing.batching import INSERT_BATCH_CHUNKS, Entry, batch_chunks, iter_batches
from minirag_core.indexing.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS
from minirag_core.concurrency import ReadWriteLock
from minirag_core.indexing.documents import DEFAULT_MAX_DOCUMENT_BYTES, DocumentInput, InsertReport, content_hash, validate_documents
from minirag_core.embedding.base import Embedder
from minirag_core.extraction.base import Extractor, QueryMapper
from minirag_core.indexing.heap import release_freed_memory
from minirag_core.indexing.index_async import IndexAsync
from minirag_core.indexing.index_reads import IndexReads
from minirag_core.indexing.manifest import (IndexSettingsMismatch, check_manifest, manifest, mark_migrated,
                                           rebuild_command)
from minirag_core.indexing.progress import InsertProgress
from minirag_core.indexing.relation_vectors import (MARKER_FILE, RelationVectorPolicy, embed_relation_vectors,
                                                    noted_if_incomplete)
from minirag_core.indexing.workers import IndexWorkers, Prepared
from minirag_core.search.lexical import TOKENISER_KEY, tokenize
from minirag_core.search.graph_vectors import expected_vector_ids, reembed_changed_chunks, repair_vectors
from minirag_core.indexing.vector_sync import STATE_FILE, known_clean, mark_clean, mark_writing
from minirag_core.llm.base import LLMBackend
from minirag_core.llm.cache import LLMCallCache
from minirag_core.llm.usage import counts_tokens, metered
from minirag_core.indexing.build_usage import record_build_usage
from minirag_core.indexing.registry import DocumentRecord
from minirag_core.indexing.sessions import Sessions
from minirag_core.retrieval.core_sources import CoreSources
from minirag_core.retrieval.filters import FilterInput, MetadataFilter, as_filter
from minirag_core.retrieval.pipeline import check_mode, retrieve
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.storage.base import GraphStore, VectorStore
from minirag_core.storage.graph_stores import open_graph_store
from minirag_core.storage.namespaces import check_namespace_location
from minirag_core.storage.token_cache import TokenCache
from minirag_core.types import Chunk, Document, ExtractionResult, QueryMapping, RetrievalResult
from minirag_core.indexing.workdir_lock import WorkdirLock
from minirag_core.search.vectors import VectorIndex

__all__ = ["Answer", "CoreSources", "DocumentRecord", "IndexSettingsMismatch", "MiniRAGIndex"]

logger = logging.getLogger("minirag_core")

TOKENS_FILE = "lexical_tokens.sqlite"
TRIM_AFTER_GROWTH_BYTES = 64 << 20  # a write returns freed heap pages once RSS grew this much


class MiniRAGIndex(IndexReads, IndexAsync, Sessions):
    """MiniRAG's heterogeneous graph index with path-scored retrieval.

    With no ``llm`` it runs on the embedded default: the offline extractor and query mapper
    and the bundled all-MiniLM-L6-v2, so it needs no server. Give an ``llm`` (any
    ``LLMBackend``, e.g. ``OllamaBackend``) for model-based extraction, query mapping and
    answers; or pass ``extractor`` / ``query_mapper`` explicitly to mix the two. The graph is the
    embedded networkx store unless ``graph_backend="sqlite"`` (a file: the graph need not fit in
    memory), ``falkordb_url`` (``falkordb://HOST:PORT[/GRAPH]``) or a ``graph_store`` is given; a
    workdir reopens with the store it was built with. ``namespace`` names an index among several on one
    Chroma and one FalkorDB server (``storage/namespaces.py``). ``workers=N`` extracts and embeds in N
    processes (``worker_backend="ray"``: as tasks on the Ray cluster ``ray.init()`` reaches) while
    this process writes, with the same result (``indexing/workers.py``); by default one per core, but not for an insert too
    small to pay for them; ``close()`` (or ``with``) stops them. Relation vectors, which only light mode searches, are embedded
    while indexing (``index_relations=True``) or never (``False``); a query takes no lock and writes nothing."""

    def __init__(self, workdir: str | Path | None = None, *, embedder: Embedder | None = None,
                 llm: LLMBackend | None = None, extractor: Extractor | None = None,
                 query_mapper: QueryMapper | None = None, vector_store: VectorStore | None = None,
                 chroma_url: str | None = None, graph_store: GraphStore | None = None, falkordb_url: str | None = None,
                 graph_backend: str | None = None, chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                 chunk_overlap: int = DEFAULT_CHUNK_OVERLAP, settings: RetrievalSettings | None = None,
                 index_relations: bool = True, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
                 show_progress: bool = False, lock_timeout: float | None = None, workers: int | None = None,
                 worker_backend: str = "process", namespace: str | None = None) -> None:
        check_namespace_location(namespace, workdir is not None, bool(falkordb_url or graph_store))
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
        self.namespace = namespace
        migrations = check_manifest(self.workdir, manifest(embedder, chunk_tokens, chunk_overlap, namespace))
        self.llm_cache = LLMCallCache(self._path("llm_calls.jsonl"))
        self.extraction_cache = LLMCallCache(self._path("extractions.jsonl"))
        self.extractor, self.query_mapper = default_models(embedder, llm, self.llm_cache, self._path("type_vectors.npz"),
                                                           extractor, query_mapper)
        self.workers = IndexWorkers(workers, worker_backend, self.extractor, embedder, self.extraction_cache)
        if vector_store is None:
            from minirag_core.storage.chroma_store import open_vector_store

            vector_store = open_vector_store(self.workdir, chroma_url, namespace)
        self.graph_store = graph_store or open_graph_store(self.workdir, falkordb_url, graph_backend, namespace)
        self.vectors = VectorIndex(vector_store, embedder)
        self._relations = RelationVectorPolicy(index_relations, self._path(MARKER_FILE), self.vectors)
        self._failed = FailedChunks(self._path(FAILED_FILE))
        self._retried: dict[str, str] = {}  # chunk id -> document id, extracted by this write's retry
        tokens_path = self._path(TOKENS_FILE)  # BM25 tokens kept as chunks are indexed
        self.token_cache = TokenCache(tokens_path, TOKENISER_KEY) if tokens_path is not None else None
        self.sources = CoreSources(self.graph_store, self.vectors, embedder, self.token_cache, llm)
        self._rw = ReadWriteLock()
        self._type_pool: dict[str, list[str]] | None = None
        self._chunk_count: int | None = None
        self._process_lock = WorkdirLock(self.workdir, lock_timeout) if self.workdir is not None else None
        if migrations:
            self._migrate(migrations)
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
            self._retry_failed_chunks()
            yield
            return
        with self._process_lock:
            self._reload_if_changed()
            embed_relations = self._relations.at_write()  # first: repair checks the relations kept
            self._repair_unless_clean()  # a write that did not end, here or in another process
            if embed_relations:
                self._embed_relation_vectors()
            mark_writing(self._path(STATE_FILE))
            self._retry_failed_chunks()
            yield
            with self._rw.write():
                self.graph_store.settle()
            mark_clean(self._path(STATE_FILE), self.vectors.store)

    def _migrate(self, migrations: tuple[str, ...]) -> None:
        """Bring a workdir of an older schema up to this one (``indexing/manifest.py``), under
        the write lock; one that cannot be written is refused with the command that rebuilds it."""
        try:
            with self._writing():
                if "chunk_vectors" in migrations:
                    with self._rw.write():
                        count = reembed_changed_chunks(self.graph_store, self.vectors)
                        self._after_write()
                    logger.warning("%s: chunk vectors of an older schema; %d embedded again", self.workdir, count)
                mark_migrated(self.workdir)
        except OSError as exc:
            raise IndexSettingsMismatch(f"{self.workdir} is of an older schema and could not be brought up to date "
                                        f"({exc}). Open it once where it can be written, or rebuild it: "
                                        f"{rebuild_command(self.workdir)}") from exc

    @property
    def index_relations(self) -> bool:
        """Whether writes embed relation vectors now (light mode's; ``indexing/relation_vectors.py``)."""
        return self._relations.kept

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
        """Read what another process wrote since this one read the graph (True if it had), unless one is writing now."""
        if self._process_lock is None or not self._process_lock.try_acquire():
            return False
        try:
            return self._reload_if_changed()
        finally:
            self._process_lock.release()

    def close(self) -> None:
        """Shut the worker processes down and close cache files (a later insert reopens them)."""
        self.workers.close()
        self.llm_cache.close(), self.extraction_cache.close()

    def __enter__(self) -> "MiniRAGIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _path(self, name: str) -> Path | None:
        return self.workdir / name if self.workdir is not None else None

    # -- registry ---------------------------------------------------------------------------
    def chunk_count(self) -> int:
        """How many chunks the index holds: counted by the store once, then kept until a write changes the graph."""
        count = self._chunk_count
        if count is None:
            with self._rw.read():
                count = self._chunk_count = self.graph_store.count_chunks()
        return count

    def insert(self, documents: Iterable[DocumentInput], *, show_progress: bool | None = None) -> InsertReport:
        """Add documents; unchanged ones are skipped, changed ones replaced. Only new chunks are extracted, in batches saved
        as they complete (a crash loses at most the batch under way, and re-running resumes); the report has the model tokens."""
        with self._writing(), metered() as usage:
            report = self._insert(documents, show_progress)
            report.token_usage = record_build_usage(self.workdir, usage)
            return report

    def _insert(self, documents: Iterable[DocumentInput], show_progress: bool | None) -> InsertReport:
        accepted, rejected = validate_documents(documents, max_bytes=self.max_document_bytes)
        report = InsertReport(rejected=rejected, retried_chunks=dict(self._retried))
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
        with closing(self.workers.prepared(batches, batch_chunks, sum(len(d.text) for d, _ in pending),
                                            self.index_relations)) as prepared:
            for batch, ready in prepared:
                self._insert_batch(batch, ready, report)
                progress.update(batch)
        progress.close()
        return report

    def _insert_batch(self, batch: list[Entry], prepared: Prepared, report: InsertReport) -> None:
        """Add and save an extracted batch: whole documents and pieces of long ones (``complete``
        False until a document's last piece; an unfinished one has no hash, so a re-run redoes it)."""
        chunks = batch_chunks(batch)
        found = prepared.extractions
        failed = [chunk for chunk, extraction in zip(chunks, found) if extraction is None]
        for chunk in failed:
            report.failed_chunks[chunk.id] = chunk.doc_id
        # recorded before the graph is saved: the next write retries them (``indexing/failed_chunks.py``)
        self._failed.update(failed, [c.id for c, e in zip(chunks, found) if e is not None])
        extractions = [e if e is not None else ExtractionResult() for e in found]
        self._add_extracted(chunks, extractions, batch, prepared.vectors)
        if self.token_cache is not None:  # after the save: a crash before leaves them to the first query
            self.token_cache.put(dict(zip([c.id for c in chunks], tokenize([c.text for c in chunks]))))
        report.chunks += len(chunks)
        report.unparsed_records += sum(e.unparsed_records for e in extractions)

    def _add_extracted(self, chunks: list[Chunk], extractions: list[ExtractionResult], batch: list[Entry],
                       vectors: dict[str, Any]) -> None:
        with self._rw.write():
            add_extracted(self.graph_store, self.vectors, self.embedder, self.registry, chunks, extractions, batch,
                          vectors, index_relations=self.index_relations)
            self._after_write()

    def _retry_failed_chunks(self) -> None:
        """Extract again the chunks whose extraction failed before (recorded in the workdir) and
        put what they yield into the graph; those failing again stay recorded for the next write."""
        done = retry_failed(self._failed, self.graph_store, self.workers.extract_here)
        if done:
            self._add_extracted([c for c, _ in done], [e for _, e in done], [], {})
            self._failed.discard([c.id for c, _ in done])
        self._retried = {c.id: c.doc_id for c, _ in done}

    def delete(self, doc_ids: str | Sequence[str]) -> list[str]:
        """Remove documents and everything only they contributed; returns the ids removed."""
        ids = [doc_ids] if isinstance(doc_ids, str) else list(dict.fromkeys(doc_ids))  # an id named twice: once
        with self._writing(), self._rw.write():
            removed, chunk_ids = remove_documents(self.graph_store, self.vectors, self.registry, ids,
                                                  index_relations=self.index_relations)
            self._failed.discard(chunk_ids)
            self._after_write()
            if self.token_cache is not None:
                self.token_cache.drop(chunk_ids)
        return removed

    def _after_write(self) -> None:
        self.graph_store.changed()
        self._type_pool = None
        self._chunk_count = None
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
        pool = await asyncio.to_thread(self.type_pool)  # read from the store the first time (a server's)
        return await self.query_mapper.amap_query(query, pool)

    def _retrieve(self, query: str, mode: str, mapping: QueryMapping | None, settings: RetrievalSettings,
                  where: MetadataFilter | None) -> RetrievalResult:
        with self._rw.read():
            return retrieve(self.sources, query, mode, settings, mapping=mapping, doc_metadata=self.registry.metadata_view(),
                            passing=None if where is None else self.registry.passing(where))

    @counts_tokens
    def query(self, query: str, *, mode: str = "mini", filter: FilterInput = None, **overrides: Any) -> RetrievalResult:
        """Retrieve for ``query`` from documents passing ``filter`` (``retrieval/filters.py``); overrides change settings."""
        settings, where = self._plan(query, mode, overrides), as_filter(filter)
        mapping = None if mode == "naive" else self.map_query(query)
        return noted_if_incomplete(self._relations, self._retrieve(query, mode, mapping, settings, where))

    @counts_tokens
    async def aquery(self, query: str, *, mode: str = "mini", filter: FilterInput = None, **overrides: Any) -> RetrievalResult:
        settings, where = self._plan(query, mode, overrides), as_filter(filter)
        mapping = None if mode == "naive" else await self.amap_query(query)
        result = await asyncio.to_thread(self._retrieve, query, mode, mapping, settings, where)
        return noted_if_incomplete(self._relations, result)

    def _plan(self, query: str, mode: str, overrides: dict[str, Any]) -> RetrievalSettings:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        check_mode(mode)
        return self.settings.with_overrides(**overrides)

    @counts_tokens
    def answer(self, query: str, *, mode: str = "mini", response_type: str = DEFAULT_RESPONSE_TYPE,
               **overrides: Any) -> Answer:
        """Answer with the ``minirag_response`` prompt; without a model, return the context."""
        return answer_from(self.llm, query, self.query(query, mode=mode, **overrides), response_type)

    @counts_tokens
    async def aanswer(self, query: str, *, mode: str = "mini", response_type: str = DEFAULT_RESPONSE_TYPE,
                      **overrides: Any) -> Answer:
        result = await self.aquery(query, mode=mode, **overrides)
        return await aanswer_from(self.llm, query, result, response_type)
