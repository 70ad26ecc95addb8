"""MiniRAG retrievers for LlamaIndex.

* :class:`MiniRAGRetriever` - a standalone ``BaseRetriever``, either over a
  ``PropertyGraphIndex`` / ``PropertyGraphStore`` filled by ``MiniRAGExtractor``
  (:meth:`MiniRAGRetriever.from_property_graph`) or over a core ``MiniRAGIndex``
  (:meth:`MiniRAGRetriever.from_index`).
* :class:`MiniRAGPGRetriever` - the same retrieval as a ``CustomPGRetriever`` sub-retriever for
  ``PropertyGraphIndex.as_retriever(sub_retrievers=[...])``.

Both return ``NodeWithScore`` chunks (the original LlamaIndex node where the store has it)
whose metadata carry MiniRAG's explanation: reasoning paths, key relationships and answer
candidates touching the chunk, its score and why it was picked (``via``). These keys are
excluded from the LLM and embedding views of the node, so answer prompts see the chunk text.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any, Optional

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.graph_stores.types import PropertyGraphStore
from llama_index.core.indices.property_graph.sub_retrievers.custom import CustomPGRetriever
from llama_index.core.schema import BaseNode, NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode

from minirag_core.extraction.base import QueryMapper
from minirag_core.retrieval.pipeline import MODES, amap_query, aretrieve, check_mode, map_query, retrieve
from minirag_core.retrieval.settings import RetrievalSettings
from minirag_core.storage.base import GraphView
from minirag_core.types import RetrievalResult

from minirag_core.retrieval.filters import MetadataFilter as CoreFilter
from minirag_core.retrieval.filters import Passing, passing

from .adapters import LlamaIndexLLMBackend
from .filters import LlamaFilterInput, to_core_filter
from .graph_sources import GraphSnapshot, PropertyGraphSources

__all__ = ["MiniRAGRetriever", "MiniRAGPGRetriever", "result_to_nodes", "MODES", "METADATA_KEYS"]

METADATA_KEYS = ("minirag_mode", "minirag_score", "minirag_via", "minirag_doc_id", "minirag_entities",
                 "minirag_reasoning_paths", "minirag_key_relationships", "minirag_answer_candidates",
                 "minirag_query_entities", "minirag_answer_types")


#: what each node's explanation shows: its own strongest paths and relationships (as the LangChain adapter)
MAX_PATHS_PER_NODE = 5
MAX_RELATIONSHIPS_PER_NODE = 5


def result_to_nodes(result: RetrievalResult, graph: GraphView,
                    llama_nodes: Optional[dict[str, BaseNode]] = None) -> list[NodeWithScore]:
    """Retrieved chunks as ``NodeWithScore``; each node's metadata holds the reasoning paths,
    key relationships and answer candidates that touch the chunk's entities (JSON values). A chunk
    of a core index is cited: a ``SOURCE`` relationship to its document, ``start_char_idx`` /
    ``end_char_idx`` its place in the document's text (None where unknown), ``heading_path``."""
    names: dict[str, str] = {}

    def name(entity_id: str) -> str:
        if entity_id not in names:
            names[entity_id] = (graph.entity(entity_id) or {}).get("name", entity_id)
        return names[entity_id]

    out = []
    for chunk in result.chunks:
        explanation = result.explain(chunk.chunk_id)
        base = (llama_nodes or {}).get(chunk.chunk_id)
        if base is not None:
            node = base.model_copy(deep=True)
        else:
            node = TextNode(id_=chunk.chunk_id, text=chunk.text,
                            metadata={"heading_path": list(chunk.heading_path), **dict(chunk.metadata)},
                            start_char_idx=chunk.start_index, end_char_idx=chunk.end_index,
                            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=chunk.doc_id)})
        node.metadata.update({
            "minirag_mode": result.mode,
            "minirag_score": float(chunk.score),
            "minirag_via": chunk.via,
            "minirag_doc_id": chunk.doc_id,
            "minirag_entities": [name(e) for e in chunk.entities],
            "minirag_reasoning_paths": [
                {"query_entity": p.query_entity, "entities": [name(n) for n in p.nodes], "score": float(p.score)}
                for p in explanation.ranked_paths()[:MAX_PATHS_PER_NODE]],
            "minirag_key_relationships": [
                {"source": name(e.source), "target": name(e.target), "score": float(e.score),
                 "keywords": e.keywords, "description": e.description}
                for e in explanation.ranked_key_edges()[:MAX_RELATIONSHIPS_PER_NODE]],
            "minirag_answer_candidates": [name(c) for c in explanation.answer_candidates],
            "minirag_query_entities": list(result.mapping.entities) if result.mapping else [],
            "minirag_answer_types": list(result.mapping.answer_types) if result.mapping else [],
        })
        for excluded in (node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys):
            excluded.extend(k for k in METADATA_KEYS if k not in excluded)
        out.append(NodeWithScore(node=node, score=float(chunk.score)))
    return out


class _CoreIndexRunner:
    """Retrieval through a core ``MiniRAGIndex`` (its own query mapper and settings)."""

    def __init__(self, index: Any, mode: str, overrides: dict[str, Any], where: CoreFilter | None = None) -> None:
        self.index, self.mode, self.overrides, self.where = index, mode, overrides, where

    def run(self, query: str) -> tuple[RetrievalResult, GraphView, dict[str, BaseNode]]:
        return self.index.query(query, mode=self.mode, filter=self.where, **self.overrides), self.index.graph_store, {}

    async def arun(self, query: str) -> tuple[RetrievalResult, GraphView, dict[str, BaseNode]]:
        result = await self.index.aquery(query, mode=self.mode, filter=self.where, **self.overrides)
        return result, self.index.graph_store, {}


def snapshot_passing(snap: GraphSnapshot, where: CoreFilter | None) -> Passing | None:
    """What ``where`` lets through of a graph snapshot (its chunks grouped by document)."""
    if where is None:
        return None
    nodes, by_doc = snap.graph.graph.nodes, {}
    for chunk_id in snap.chunk_ids:
        by_doc.setdefault(nodes[chunk_id].get("doc_id", chunk_id), []).append(chunk_id)
    return passing(where, ((d, snap.doc_metadata.get(d, {}), chunks) for d, chunks in by_doc.items()))


class _SessionRunner:
    """Retrieval as the next turn of a core ``MiniRAGSession``: chunks an earlier turn returned come
    back by reference (``[see passage N above]``), new ones headed ``[passage N]``."""

    def __init__(self, session: Any, mode: str, overrides: dict[str, Any]) -> None:
        self.session, self.mode, self.overrides = session, mode, overrides

    def run(self, query: str) -> tuple[RetrievalResult, GraphView, dict[str, BaseNode]]:
        turn = self.session.query(query, mode=self.mode, **self.overrides)
        return turn.shown_result(), self.session.index.graph_store, {}

    async def arun(self, query: str) -> tuple[RetrievalResult, GraphView, dict[str, BaseNode]]:
        turn = await self.session.aquery(query, mode=self.mode, **self.overrides)
        return turn.shown_result(), self.session.index.graph_store, {}


class _GraphRunner:
    """Retrieval over ``PropertyGraphSources`` with the core's retrieval functions."""

    def __init__(self, sources: PropertyGraphSources, mode: str, settings: RetrievalSettings,
                 mapper: QueryMapper, where: CoreFilter | None = None) -> None:
        self.sources, self.mode, self.settings, self.mapper, self.where = sources, mode, settings, mapper, where

    def run(self, query: str) -> tuple[RetrievalResult, GraphView, dict[str, BaseNode]]:
        snap = self.sources.snapshot()
        mapping = map_query(self.mapper, query, self.mode, snap.type_pool)
        result = retrieve(snap, query, self.mode, self.settings, mapping=mapping, doc_metadata=snap.doc_metadata,
                          passing=snapshot_passing(snap, self.where))
        return result, snap.graph, snap.llama_nodes

    async def arun(self, query: str) -> tuple[RetrievalResult, GraphView, dict[str, BaseNode]]:
        snap = await asyncio.to_thread(self.sources.snapshot)
        mapping = await amap_query(self.mapper, query, self.mode, snap.type_pool)
        result = await aretrieve(snap, query, self.mode, self.settings, mapping=mapping,
                                 doc_metadata=snap.doc_metadata, passing=snapshot_passing(snap, self.where))
        return result, snap.graph, snap.llama_nodes


#: text -> vector caches, one per (store, embedding model), weakly keyed by the store: they hold
#: only vectors (no model) and live as long as the store, so retrievers on one store share them
_VECTORS: "weakref.WeakKeyDictionary[Any, dict[str, dict]]" = weakref.WeakKeyDictionary()
_VECTORS_LOCK = threading.Lock()


def _shared_vectors(store: PropertyGraphStore, embedder_name: str) -> Optional[dict]:
    """One text -> vector cache per (store, embedding model), shared by every retriever built on
    that store, so building another retriever does not embed the graph again."""
    with _VECTORS_LOCK:
        try:
            return _VECTORS.setdefault(store, {}).setdefault(embedder_name, {})
        except TypeError:  # a store that cannot be weakly referenced or hashed: no sharing
            return None


def _sources_for(graph: Any, embed_model: Any, vector_cache: Any = None) -> PropertyGraphSources:
    if isinstance(graph, PropertyGraphSources):
        return graph
    store = getattr(graph, "property_graph_store", graph)
    if not isinstance(store, PropertyGraphStore):
        raise TypeError("expected a PropertyGraphIndex, a PropertyGraphStore or PropertyGraphSources, "
                        f"got {type(graph).__name__}")
    if embed_model is None:
        embed_model = getattr(graph, "_embed_model", None)  # the index's own model, if it has one
    sources = PropertyGraphSources(store, embed_model, vector_cache=vector_cache)
    shared = None if vector_cache is not None else _shared_vectors(store, sources.embedder.name)
    if shared is not None:
        sources.share_vectors(shared)
    return sources


def _mapper_for(sources: PropertyGraphSources, llm: Any, query_mapper: Optional[QueryMapper]) -> QueryMapper:
    if query_mapper is not None:
        return query_mapper
    if llm is not None:
        from minirag_core.retrieval.query.model_mapping import LLMQueryMapper

        return LLMQueryMapper(LlamaIndexLLMBackend(llm), fallback=sources.offline_query_mapper())
    return sources.offline_query_mapper()


class MiniRAGRetriever(BaseRetriever):
    """MiniRAG's path-scored retrieval as a LlamaIndex retriever (modes mini, light, naive).

    Build it with :meth:`from_property_graph` (a ``PropertyGraphIndex`` or its store, filled by
    ``MiniRAGExtractor``) or :meth:`from_index` (a core ``MiniRAGIndex``). Keyword overrides
    (``top_k``, ``token_budget``, ``hops``...) change ``RetrievalSettings`` for every query; when
    ``token_budget`` (6000 tokens of chunk text by default) holds fewer than ``top_k`` chunks, the
    result's notes (:meth:`retrieve_result`) and a ``minirag_core`` logger warning say so.
    """

    def __init__(self, runner: Any, *, mode: str = "mini", callback_manager: Any = None,
                 verbose: bool = False) -> None:
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self._runner = runner
        self.mode = check_mode(mode)

    @classmethod
    def from_index(cls, index: Any, *, mode: str = "mini", top_k: Optional[int] = None,
                   filters: LlamaFilterInput = None, callback_manager: Any = None,
                   **overrides: Any) -> "MiniRAGRetriever":
        """Wrap a core ``MiniRAGIndex``: queries go through ``index.query`` / ``index.aquery``
        (with the index's own query mapper), so results equal the core's. ``filters``
        (``MetadataFilters``) keeps retrieval to the documents whose metadata pass."""
        runner = _CoreIndexRunner(index, check_mode(mode), {"top_k": top_k, **overrides}, to_core_filter(filters))
        return cls(runner, mode=mode, callback_manager=callback_manager)

    @classmethod
    def from_session(cls, session: Any, *, mode: Optional[str] = None, top_k: Optional[int] = None,
                     callback_manager: Any = None, **overrides: Any) -> "MiniRAGRetriever":
        """Each query is the next turn of a core ``MiniRAGSession`` (``index.session()``): a
        follow-up naming no entity continues the last turn's, a chunk sent before comes back as
        ``[see passage N above]`` and a new one only when it scores near the turn's best (the
        session's ``admit_ratio``; e.g. under ``CondensePlusContextChatEngine``)."""
        mode = check_mode(mode or session.mode)
        return cls(_SessionRunner(session, mode, {"top_k": top_k, **overrides}), mode=mode,
                   callback_manager=callback_manager)

    @classmethod
    def from_property_graph(cls, graph: Any, *, mode: str = "mini", top_k: Optional[int] = None,
                            llm: Any = None, embed_model: Any = None, query_mapper: Optional[QueryMapper] = None,
                            settings: Optional[RetrievalSettings] = None, callback_manager: Any = None,
                            vector_cache: Any = None, filters: LlamaFilterInput = None,
                            **overrides: Any) -> "MiniRAGRetriever":
        """Retrieve over a ``PropertyGraphIndex`` / ``PropertyGraphStore`` / ``PropertyGraphSources``.

        ``embed_model``: LlamaIndex ``BaseEmbedding`` or core ``Embedder`` for MiniRAG's vectors
        (default: the index's embed model if it has one, else the bundled all-MiniLM-L6-v2).
        ``llm``: a LlamaIndex ``LLM`` for query mapping (default: the core's offline mapper).
        ``vector_cache``: a folder, Chroma collection or ``ChromaVectorStore`` keeping MiniRAG's
        graph vectors, so a new process does not embed the graph again. ``filters``
        (``MetadataFilters``) keeps retrieval to the source documents whose metadata pass.
        """
        where = to_core_filter(filters)
        sources = _sources_for(graph, embed_model, vector_cache)
        resolved = (settings or RetrievalSettings()).with_overrides(top_k=top_k, **overrides)
        runner = _GraphRunner(sources, check_mode(mode), resolved, _mapper_for(sources, llm, query_mapper), where)
        return cls(runner, mode=mode, callback_manager=callback_manager)

    @classmethod
    async def afrom_property_graph(cls, graph: Any, **kwargs: Any) -> "MiniRAGRetriever":
        """Async :meth:`from_property_graph` (the embedding model loads in a worker thread)."""
        return await asyncio.to_thread(cls.from_property_graph, graph, **kwargs)

    @property
    def sources(self) -> Optional[PropertyGraphSources]:
        return getattr(self._runner, "sources", None)

    def retrieve_result(self, query: str) -> RetrievalResult:
        """The full core ``RetrievalResult`` (mapping, seeds, paths, key edges, chunks)."""
        return self._runner.run(query)[0]

    async def aretrieve_result(self, query: str) -> RetrievalResult:
        return (await self._runner.arun(query))[0]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return result_to_nodes(*self._runner.run(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = await self._runner.arun(query_bundle.query_str)
        return await asyncio.to_thread(result_to_nodes, *found)  # entity names are read from the store


class MiniRAGPGRetriever(CustomPGRetriever):
    """MiniRAG retrieval as a ``PropertyGraphIndex`` sub-retriever::

        retriever = index.as_retriever(sub_retrievers=[MiniRAGPGRetriever(index.property_graph_store)])

    Keyword arguments are those of :meth:`MiniRAGRetriever.from_property_graph` (``mode``,
    ``top_k``, ``filters``, ``llm``, ``embed_model``, ``query_mapper``, ``settings``, setting overrides);
    ``sources=`` shares a ``PropertyGraphSources`` (and its vectors) between retrievers.
    """

    def init(self, mode: str = "mini", top_k: Optional[int] = None, llm: Any = None, embed_model: Any = None,
             query_mapper: Optional[QueryMapper] = None, settings: Optional[RetrievalSettings] = None,
             sources: Optional[PropertyGraphSources] = None, vector_cache: Any = None, **kwargs: Any) -> None:
        for key in ("callback_manager", "include_text_preamble", "include_properties"):
            kwargs.pop(key, None)
        self.mode = check_mode(mode)
        self._minirag = MiniRAGRetriever.from_property_graph(
            sources if sources is not None else self.graph_store, mode=mode, top_k=top_k, llm=llm,
            embed_model=embed_model, query_mapper=query_mapper, settings=settings, vector_cache=vector_cache,
            **kwargs)

    @property
    def minirag(self) -> MiniRAGRetriever:
        return self._minirag

    def custom_retrieve(self, query_str: str) -> list[NodeWithScore]:
        return self._minirag._retrieve(QueryBundle(query_str))

    async def acustom_retrieve(self, query_str: str) -> list[NodeWithScore]:
        return await self._minirag._aretrieve(QueryBundle(query_str))
