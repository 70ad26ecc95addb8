"""``MiniRAGIndex``: one working directory holding MiniRAG's graph, vectors and caches,
kept correct under incremental inserts and deletes, and queried in mini, light or naive mode.

Workdir layout: ``manifest.json`` (schema version and build settings), ``graph.json``
(node-link JSON of the heterogeneous graph, including the document registry, written
atomically; ``graph.log.jsonl`` logs each later write's changes), ``extractions.jsonl`` and
``llm_calls.jsonl`` (append-only caches) and
``chroma/`` (vectors; with a Chroma server, ``chroma_server.json`` names this workdir's
collections there instead). Chroma is reconciled with the graph on open.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
from tqdm.auto import tqdm

from . import graph as graph_ops
from .chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS, iter_chunks
from .concurrency import ReadWriteLock
from .documents import DEFAULT_MAX_DOCUMENT_BYTES, DocumentInput, InsertReport, content_hash, validate_documents
from .embedding.base import Embedder
from .extraction.base import Extractor, QueryMapper
from .lexical import LexicalChunkIndex
from .llm.base import LLMBackend, LLMError
from .llm.cache import LLMCallCache
from .retrieval import retrieve_light, retrieve_mini, retrieve_naive
from .settings import RetrievalSettings
from .storage.base import VectorStore, atomic_write_json, read_json
from .storage.graph_log import Change
from .storage.networkx_store import NetworkXGraphStore
from .types import Chunk, Document, ExtractionResult, QueryMapping, RetrievalResult
from .workdir_lock import WorkdirLock
from .vectors import (CHUNKS, ENTITIES, RELATIONS, VectorIndex, chunk_ranking_text, relation_has_meaning,
                      relation_vector_id, relation_vector_text)

logger = logging.getLogger("minirag_core")

SCHEMA_VERSION = 1
INSERT_BATCH_CHUNKS = 64


class IndexSettingsMismatch(RuntimeError):
    """The workdir was built with settings that differ from the ones given now."""


@dataclass
class Answer:
    """The reply to a question, with the retrieval that grounded it."""

    text: str
    result: RetrievalResult
    generated: bool


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class CoreSources:
    """``RetrievalSources`` over the core's graph store, vector index and BM25 index."""

    def __init__(self, graph: NetworkXGraphStore, vectors: VectorIndex, embedder: Embedder) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.lexical = LexicalChunkIndex()

    def invalidate(self) -> None:
        self.lexical = LexicalChunkIndex()

    def nearest_entities(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        return [(i, s) for i, s, _ in self.vectors.nearest(ENTITIES, vector, k)]

    def chunk_dense_scores(self, vector: np.ndarray) -> dict[str, float]:
        return self.vectors.chunk_similarities(vector)

    def chunk_lexical_scores(self, query: str) -> dict[str, float]:
        lexical = self.lexical
        if not lexical.is_built:
            ids = self.graph.chunk_ids()
            lexical.build({c: a["text"] for c, a in self.graph.chunks(ids).items()})
        return lexical.scores(query)

    def nearest_relations(self, vector: np.ndarray, k: int) -> list[tuple[str, str, float]]:
        return [(m["source"], m["target"], s) for _, s, m in self.vectors.nearest(RELATIONS, vector, k)
                if "source" in m and "target" in m]


class MiniRAGIndex:
    """MiniRAG's heterogeneous graph index with path-scored retrieval.

    With no ``llm`` it runs on the embedded default: the offline extractor and query mapper
    and the bundled all-MiniLM-L6-v2, so it needs no server. Give an ``llm`` (any
    ``LLMBackend``, e.g. ``OllamaBackend``) for model-based extraction, query mapping and
    answers; or pass ``extractor`` / ``query_mapper`` explicitly to mix the two.
    """

    def __init__(self, workdir: str | Path | None = None, *, embedder: Embedder | None = None,
                 llm: LLMBackend | None = None, extractor: Extractor | None = None,
                 query_mapper: QueryMapper | None = None, vector_store: VectorStore | None = None,
                 chroma_url: str | None = None, chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                 chunk_overlap: int = DEFAULT_CHUNK_OVERLAP, settings: RetrievalSettings | None = None,
                 index_relations: bool = True, max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
                 show_progress: bool = False, lock_timeout: float | None = None) -> None:
        self.workdir = Path(workdir) if workdir is not None else None
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
        if embedder is None:
            from .embedding.sentence_transformer import SentenceTransformerEmbedder

            embedder = SentenceTransformerEmbedder()
        self.embedder = embedder
        self.llm = llm
        self.chunk_tokens, self.chunk_overlap = chunk_tokens, chunk_overlap
        self.settings = settings or RetrievalSettings()
        self.index_relations = index_relations
        self.max_document_bytes = max_document_bytes
        self.show_progress = show_progress
        self._check_manifest()
        self._entity_typer: Any = None
        self.llm_cache = LLMCallCache(self._path("llm_calls.jsonl"))
        self.extraction_cache = LLMCallCache(self._path("extractions.jsonl"))
        self.extractor = extractor or self._default_extractor()
        self.query_mapper = query_mapper or self._default_query_mapper()
        if vector_store is None:
            from .storage.chroma_store import ChromaVectorStore

            if chroma_url:
                vector_store = ChromaVectorStore(None, url=chroma_url, prefix=self._server_prefix())
            else:
                vector_store = ChromaVectorStore(self._path("chroma"))
        self.graph_store = NetworkXGraphStore(self._path("graph.json"))
        self.vectors = VectorIndex(vector_store, embedder)
        self.sources = CoreSources(self.graph_store, self.vectors, embedder)
        self._rw = ReadWriteLock()
        self._type_pool: dict[str, list[str]] | None = None
        self._process_lock = WorkdirLock(self.workdir, lock_timeout) if self.workdir is not None else None
        # repair only when no other process is writing: mid-write, graph and vectors differ by design
        if self._process_lock is None or self._process_lock.try_acquire():
            try:
                self.repair()
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
            if self.graph_store.reload_if_changed():
                self.vectors.forget()
                self._after_write()
            yield

    # -- construction helpers ------------------------------------------------------------
    def _path(self, name: str) -> Path | None:
        return self.workdir / name if self.workdir is not None else None

    def _manifest(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "embedding_model": self.embedder.name,
                "embedding_dim": int(self.embedder.dim), "chunk_tokens": self.chunk_tokens,
                "chunk_overlap": self.chunk_overlap}

    def _check_manifest(self) -> None:
        path = self._path("manifest.json")
        if path is None:
            return
        wanted = self._manifest()
        found = read_json(path, None)
        if found is None:
            atomic_write_json(path, wanted)
            return
        diffs = {k: (found.get(k), v) for k, v in wanted.items() if found.get(k) != v}
        if diffs:
            detail = ", ".join(f"{k}: built with {a!r}, opened with {b!r}" for k, (a, b) in diffs.items())
            raise IndexSettingsMismatch(f"{self.workdir} was built with other settings ({detail}). "
                                        "Open it with the same settings or index into a new workdir.")

    def _server_prefix(self) -> str:
        """Collection-name prefix on a Chroma server, own to this workdir (kept in
        ``chroma_server.json``): with one shared prefix, opening one index would make
        ``repair`` delete every other index's vectors on the same server."""
        import uuid

        path = self._path("chroma_server.json")
        if path is None:
            return f"minirag-{uuid.uuid4().hex[:12]}"
        found = read_json(path, None)
        if found is None:
            # a workdir with a graph but no local vectors was built on a server with the old
            # shared prefix: keep using it
            legacy = self._path("graph.json").exists() and not self._path("chroma").exists()
            prefix = "minirag" if legacy else f"minirag-{uuid.uuid4().hex[:12]}"
            found = {"collection_prefix": prefix}
            atomic_write_json(path, found)
        return str(found["collection_prefix"])

    def _default_extractor(self) -> Extractor:
        if self.llm is not None:
            from .extraction.llm_extractor import LLMExtractor

            return LLMExtractor(self.llm, cache=self.llm_cache)
        from .extraction.offline_extractor import OfflineExtractor

        return OfflineExtractor(self.embedder, typer=self._typer())

    def _default_query_mapper(self) -> QueryMapper:
        if self.llm is not None:
            from .query_mapping import LLMQueryMapper

            return LLMQueryMapper(self.llm, cache=self.llm_cache)
        from .query_mapping_offline import OfflineQueryMapper

        return OfflineQueryMapper(self.embedder, typer=self._typer())

    def _typer(self) -> Any:
        """One entity typer for the offline extractor and query mapper, its type vectors kept
        in the workdir so that a new process need not embed them again."""
        if self._entity_typer is None:
            from .entity_typing import EntityTyper

            self._entity_typer = EntityTyper(self.embedder, vectors_path=self._path("type_vectors.npz"))
        return self._entity_typer

    # -- registry ---------------------------------------------------------------------------
    @property
    def _documents(self) -> dict[str, dict[str, Any]]:
        return self.graph_store.graph.graph.setdefault("documents", {})

    def document_ids(self) -> list[str]:
        return sorted(self._documents)

    def doc_metadata(self) -> dict[str, dict[str, Any]]:
        return {d: r.get("metadata", {}) for d, r in self._documents.items()}

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
            known = self._documents.get(document.id)
            if known is not None and known["hash"] == digest and known.get("metadata") == document.metadata:
                report.unchanged.append(document.id)
                continue
            if known is not None:  # changed, or left unfinished by an interrupted run
                self.delete([document.id])
                report.updated.append(document.id)
            else:
                report.inserted.append(document.id)
            pending.append((document, digest))
        progress = tqdm(total=sum(len(d.text) for d, _ in pending), unit="char", unit_scale=True, desc="indexing",
                        disable=not (self.show_progress if show_progress is None else show_progress))
        batch: list[tuple[Document, str, list[Chunk], bool]] = []
        for document, digest in pending:
            chunks: list[Chunk] = []
            for chunk in iter_chunks(document, self.embedder, chunk_tokens=self.chunk_tokens,
                                     overlap_tokens=self.chunk_overlap):
                chunks.append(chunk)
                if len(chunks) >= INSERT_BATCH_CHUNKS:  # a long document: saved piece by piece
                    if batch:  # whole documents first, so a batch never ends inside a short one
                        self._insert_batch(batch, progress, report)
                        batch = []
                    self._insert_batch([(document, digest, chunks, False)], progress, report)
                    chunks = []
            batch.append((document, digest, chunks, True))
            if sum(len(c) for _, _, c, _ in batch) >= INSERT_BATCH_CHUNKS:
                self._insert_batch(batch, progress, report)
                batch = []
        if batch:
            self._insert_batch(batch, progress, report)
        progress.close()
        return report

    def _extract(self, chunks: list[Chunk]) -> list[ExtractionResult | None]:
        """Extraction results per chunk, from the cache where this extractor has seen the chunk."""
        name = self.extractor.name
        results: dict[str, ExtractionResult] = {}
        missing = []
        for chunk in chunks:
            cached = self.extraction_cache.get(name, chunk.id)
            if cached is not None:
                results[chunk.id] = ExtractionResult.from_json(json.loads(cached))
            else:
                missing.append(chunk)
        if missing:
            for chunk, result in zip(missing, self._extract_isolating_failures(missing)):
                results[chunk.id] = result
                if result is not None:
                    self.extraction_cache.put(name, chunk.id, False, json.dumps(result.to_json()))
        return [results[c.id] for c in chunks]

    def _extract_isolating_failures(self, chunks: list[Chunk]) -> list[ExtractionResult | None]:
        """The extractor's results; if it fails on the batch, chunk by chunk, so one bad chunk
        costs only itself (``None``: the chunk stays searchable but adds no entities)."""
        try:
            return list(self.extractor.extract(chunks))
        except LLMError:
            raise  # the model server is down or refusing: stop; finished batches are kept
        except Exception:  # noqa: BLE001 - any other extractor fault is isolated, logged and reported
            if len(chunks) == 1:
                logger.exception("extraction failed for chunk %s of %s; indexed without entities",
                                 chunks[0].id, chunks[0].doc_id)
                return [None]
            return [r for chunk in chunks for r in self._extract_isolating_failures([chunk])]

    def _insert_batch(self, batch: list[tuple[Document, str, list[Chunk], bool]], progress: tqdm,
                      report: InsertReport) -> None:
        """Extract, add and save a batch: whole documents and pieces of long ones (``complete``
        False until a document's last piece; an unfinished one has no hash, so a re-run redoes it)."""
        chunks = [c for _, _, doc_chunks, _ in batch for c in doc_chunks]
        found = self._extract(chunks)
        for chunk, extraction in zip(chunks, found):
            if extraction is None:
                report.failed_chunks[chunk.id] = chunk.doc_id
        extractions = [e if e is not None else ExtractionResult() for e in found]
        with self._rw.write():
            g = self.graph_store.graph
            touched_entities: set[str] = set()
            touched_edges: set[tuple[str, str]] = set()
            for chunk, extraction in zip(chunks, extractions):
                graph_ops.add_chunk(g, chunk, extraction)
                for neighbour in g.neighbors(chunk.id):
                    touched_entities.add(neighbour)
                touched_edges.update(tuple(e) for e in g.nodes[chunk.id]["relations"])
            for document, digest, doc_chunks, complete in batch:
                entry = self._documents.setdefault(document.id, {"hash": "", "chunks": [],
                                                                 "metadata": document.metadata})
                entry["chunks"].extend(c.id for c in doc_chunks)
                entry["hash"] = digest if complete else ""
            self._sync_vectors(touched_entities, touched_edges, {c.id for c in chunks})
            self.graph_store.save(Change([c.id for c in chunks] + sorted(touched_entities), touched_edges,
                                         {"documents": [d.id for d, _, _, _ in batch]}))
            self._after_write()
        progress.update(sum(len(c.text) for c in chunks))
        report.chunks += len(chunks)
        report.unparsed_records += sum(e.unparsed_records for e in extractions)

    def delete(self, doc_ids: str | Sequence[str]) -> list[str]:
        """Remove documents and everything only they contributed; returns the ids removed."""
        ids = [doc_ids] if isinstance(doc_ids, str) else list(doc_ids)
        with self._writing(), self._rw.write():
            removed = [d for d in ids if d in self._documents]
            chunk_ids = [c for d in removed for c in self._documents[d]["chunks"]]
            entities, edges = graph_ops.remove_chunks(self.graph_store.graph, chunk_ids)
            for d in removed:
                del self._documents[d]
            self.vectors.delete(CHUNKS, chunk_ids)
            self._sync_vectors(entities, edges, set())
            self.graph_store.save(Change(chunk_ids + sorted(entities), edges, {"documents": removed}))
            self._after_write()
        return removed

    def _after_write(self) -> None:
        self.graph_store.changed()
        self._type_pool = None
        self.sources.invalidate()

    def _sync_vectors(self, entities: set[str], edges: set[tuple[str, str]], chunk_ids: set[str]) -> None:
        """Bring the vectors of the given graph items in line with the graph."""
        g = self.graph_store.graph
        gone = [e for e in entities if not g.has_node(e)]
        self.vectors.delete(ENTITIES, gone)
        upsert: list[tuple[str, str, dict[str, Any]]] = []
        for entity_id in sorted(e for e in entities if g.has_node(e)):
            node = g.nodes[entity_id]
            text = node["name"]
            if node.get("vector_hash") != _text_hash(text):
                upsert.append((entity_id, text, {"type": node["type"]}))
                node["vector_hash"] = _text_hash(text)
        self.vectors.upsert(ENTITIES, [u[0] for u in upsert], [u[1] for u in upsert], [u[2] for u in upsert])
        if self.index_relations:
            dead = [relation_vector_id(u, v) for u, v in edges
                    if not g.has_edge(u, v) or not relation_has_meaning(g.edges[u, v]["keywords"])]
            self.vectors.delete(RELATIONS, dead)
            upsert = []
            for u, v in sorted(e for e in edges if g.has_edge(*e)):
                edge = g.edges[u, v]
                if not relation_has_meaning(edge["keywords"]):
                    edge.pop("vector_hash", None)
                    continue
                text = relation_vector_text(g.nodes[u]["name"], g.nodes[v]["name"], edge["keywords"],
                                            edge["description"])
                if edge.get("vector_hash") != _text_hash(text):
                    upsert.append((relation_vector_id(u, v), text, {"source": u, "target": v}))
                    edge["vector_hash"] = _text_hash(text)
            self.vectors.upsert(RELATIONS, [u[0] for u in upsert], [u[1] for u in upsert], [u[2] for u in upsert])
        upsert = []
        for chunk_id in sorted(chunk_ids):
            node = g.nodes[chunk_id]
            descriptions = [g.edges[chunk_id, n].get("description", "") for n in sorted(g.neighbors(chunk_id))]
            upsert.append((chunk_id, chunk_ranking_text(node["text"], descriptions), {"doc_id": node["doc_id"]}))
        self.vectors.upsert(CHUNKS, [u[0] for u in upsert], [u[1] for u in upsert], [u[2] for u in upsert])

    def _relations_with_vectors(self) -> dict[str, tuple[str, str]]:
        g = self.graph_store.graph
        return {relation_vector_id(u, v): (u, v) for u, v in self.graph_store.relation_edges()
                if relation_has_meaning(g.edges[u, v]["keywords"])}

    def expected_vector_ids(self) -> dict[str, set[str]]:
        """The ids each collection must hold to agree with the graph."""
        expected = {CHUNKS: set(self.graph_store.chunk_ids()), ENTITIES: set(self.graph_store.entity_ids())}
        if self.index_relations:
            expected[RELATIONS] = set(self._relations_with_vectors())
        return expected

    def repair(self) -> dict[str, int]:
        """Make Chroma agree with the graph (after a crash between the two writes)."""
        g = self.graph_store.graph
        fixed = {}
        with self._rw.write():
            wanted_chunks = set(self.graph_store.chunk_ids())
            wanted_entities = set(self.graph_store.entity_ids())
            wanted_relations = self._relations_with_vectors()
            plans = [(CHUNKS, wanted_chunks), (ENTITIES, wanted_entities)]
            if self.index_relations:
                plans.append((RELATIONS, set(wanted_relations)))
            missing: dict[str, set[str]] = {}
            for collection, wanted in plans:
                present = self.vectors.store.ids(collection)
                extra = sorted(present - wanted)
                self.vectors.delete(collection, extra)
                missing[collection] = wanted - present
                fixed[f"{collection}_removed"] = len(extra)
                fixed[f"{collection}_added"] = len(missing[collection])
            for entity_id in missing[ENTITIES]:
                g.nodes[entity_id].pop("vector_hash", None)
            for rel_id in missing.get(RELATIONS, ()):
                g.edges[wanted_relations[rel_id]].pop("vector_hash", None)
            self._sync_vectors(missing[ENTITIES], {wanted_relations[r] for r in missing.get(RELATIONS, ())},
                               missing[CHUNKS])
            if any(fixed.values()):
                logger.warning("repaired vectors to match the graph: %s", fixed)
                self.graph_store.save()
            self._after_write()
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
            metadata = self.doc_metadata()
            if mode == "naive":
                return retrieve_naive(self.sources, query, settings, metadata)
            if mapping is None:
                raise ValueError("mini and light modes need a query mapping")
            if mode == "mini":
                return retrieve_mini(self.sources, query, mapping, settings, metadata)
            if mode == "light":
                return retrieve_light(self.sources, query, mapping, settings, metadata)
        raise ValueError(f"unknown mode {mode!r}; choose mini, light or naive")

    def query(self, query: str, *, mode: str = "mini", **overrides: Any) -> RetrievalResult:
        """Retrieve for ``query``; keyword overrides change ``RetrievalSettings`` for this call."""
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        settings = self.settings.with_overrides(**overrides)
        mapping = None if mode == "naive" else self.map_query(query)
        return self._retrieve(query, mode, mapping, settings)

    async def aquery(self, query: str, *, mode: str = "mini", **overrides: Any) -> RetrievalResult:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        settings = self.settings.with_overrides(**overrides)
        mapping = None if mode == "naive" else await self.amap_query(query)
        return await asyncio.to_thread(self._retrieve, query, mode, mapping, settings)

    def answer(self, query: str, *, mode: str = "mini", response_type: str = "Multiple Paragraphs",
               **overrides: Any) -> Answer:
        """Answer with the ``minirag_response`` prompt; without a model, return the context."""
        from .prompts import build_answer_prompt

        result = self.query(query, mode=mode, **overrides)
        if self.llm is None:
            return Answer(_no_model_text(result), result, generated=False)
        return Answer(self.llm.complete(build_answer_prompt(query, result.to_context(), response_type)),
                      result, generated=True)

    async def aanswer(self, query: str, *, mode: str = "mini", response_type: str = "Multiple Paragraphs",
                      **overrides: Any) -> Answer:
        from .prompts import build_answer_prompt

        result = await self.aquery(query, mode=mode, **overrides)
        if self.llm is None:
            return Answer(_no_model_text(result), result, generated=False)
        reply = await self.llm.acomplete(build_answer_prompt(query, result.to_context(), response_type))
        return Answer(reply, result, generated=True)


def _no_model_text(result: RetrievalResult) -> str:
    return ("No language model is configured, so no answer was generated. "
            "The retrieved context and its reasoning paths follow.\n\n" + result.to_context())
