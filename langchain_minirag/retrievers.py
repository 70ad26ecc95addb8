"""``MiniRAGRetriever``: MiniRAG's graph retrieval as a LangChain ``BaseRetriever``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from minirag_core.indexing.documents import content_hash
from minirag_core.embedding.base import Embedder
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.llm.base import LLMBackend
from minirag_core.retrieval.pipeline import check_mode, fill_to_k, shortfall
from minirag_core.retrieval.session import MiniRAGSession, SessionResult
from minirag_core.types import RetrievalResult, ScoredChunk
from minirag_core.retrieval.filters import as_filter
from pydantic import ConfigDict, Field, field_validator

from .adapters import ChatModelBackend, LangChainEmbedder, active_callbacks

Mode = Literal["mini", "light", "naive"]
MAX_PATHS_PER_CHUNK = 5
MAX_RELATIONSHIPS_PER_CHUNK = 5
MAX_ANSWER_CANDIDATES = 10


def _as_backend(llm: BaseChatModel | LLMBackend | None) -> LLMBackend | None:
    if llm is None or isinstance(llm, ChatModelBackend):
        return llm
    if isinstance(llm, BaseChatModel):
        return ChatModelBackend(llm)
    if isinstance(llm, LLMBackend):
        return llm
    raise TypeError(f"llm must be a LangChain chat model or an LLMBackend, got {type(llm).__name__}")


def _as_embedder(embeddings: Embeddings | Embedder | None) -> Embedder | None:
    if embeddings is None or isinstance(embeddings, LangChainEmbedder):
        return embeddings
    if isinstance(embeddings, Embeddings):
        return LangChainEmbedder(embeddings)
    if isinstance(embeddings, Embedder):
        return embeddings
    raise TypeError(f"embeddings must be LangChain Embeddings or an Embedder, got {type(embeddings).__name__}")


def _document_id(text: str, given: str | None) -> str:
    # The core's own default id for a document without one (minirag_core.indexing.documents).
    return given or f"doc-{content_hash(text)[:32]}"


def _chunk_metadata(chunk: ScoredChunk, result: RetrievalResult) -> dict[str, Any]:
    """The source document's metadata plus ``minirag_*`` keys and the citation: ``source`` (the
    document's own, else its id), ``document_id``, ``heading_path`` and the chunk's character offsets
    in the document, ``start_index`` (LangChain's key) and ``end_index`` (None where unknown); a
    user's own key always wins."""
    # Paths and key relationships touching this chunk's entities, those sharing the most
    # entities with the chunk first (e.g. the path that ends in this chunk's session), then by score.
    explanation = result.explain(chunk.chunk_id)
    paths, edges = explanation.ranked_paths(), explanation.ranked_key_edges()
    extra: dict[str, Any] = {
        "minirag_score": float(chunk.score),
        "minirag_chunk_id": str(chunk.chunk_id),
        "minirag_doc_id": str(chunk.doc_id),
        "doc_id": str(chunk.doc_id),
        "minirag_via": str(chunk.via),
        "minirag_mode": str(result.mode),
        "minirag_entities": [str(e) for e in chunk.entities],
        "minirag_paths": [{"query_entity": str(p.query_entity), "nodes": [str(n) for n in p.nodes],
                           "score": float(p.score)} for p in paths[:MAX_PATHS_PER_CHUNK]],
        "minirag_key_relationships": [{"source": str(e.source), "target": str(e.target), "score": float(e.score),
                                       "description": str(e.description), "keywords": str(e.keywords)}
                                      for e in edges[:MAX_RELATIONSHIPS_PER_CHUNK]],
        "minirag_answer_candidates": [str(c) for c in result.answer_candidates[:MAX_ANSWER_CANDIDATES]],
        "minirag_query_entities": [str(e) for e in result.mapping.entities] if result.mapping else [],
        "minirag_answer_types": [str(t) for t in result.mapping.answer_types] if result.mapping else [],
    }
    cite = {"source": str(chunk.doc_id), "document_id": str(chunk.doc_id),  # a document's own source wins
            "heading_path": [str(h) for h in chunk.heading_path], "start_index": chunk.start_index,
            "end_index": chunk.end_index}
    return {**extra, **cite, **chunk.metadata}


def _summary(result: RetrievalResult) -> dict[str, Any]:
    via: dict[str, int] = {}
    for chunk in result.chunks:
        via[chunk.via] = via.get(chunk.via, 0) + 1
    return {"mode": result.mode, "chunks": len(result.chunks), "via": via, "paths": len(result.ranked_paths()),
            "key_relationships": len(result.key_edges), "answer_candidates": len(result.answer_candidates),
            "query_entities": list(result.mapping.entities) if result.mapping else [],
            "answer_types": list(result.mapping.answer_types) if result.mapping else [],
            "notes": list(result.notes)}


def _summary_text(summary: dict[str, Any]) -> str:
    via = ", ".join(f"{n} {v}" for v, n in sorted(summary["via"].items())) or "none"
    text = (f"MiniRAG {summary['mode']} retrieval: {summary['chunks']} chunks ({via}); "
            f"{summary['paths']} reasoning paths, {summary['key_relationships']} key relationships, "
            f"{summary['answer_candidates']} answer candidates")
    if summary["query_entities"]:
        text += f"; query entities {summary['query_entities']}"
    return text + "".join(f"\nnote: {note}" for note in summary["notes"]) + "\n"


class MiniRAGRetriever(BaseRetriever):
    """Retriever over a MiniRAG index (heterogeneous graph + path-scored chunk ranking).

    Returns up to ``k`` chunks as ``Document``s — exactly ``k`` whenever the index holds at
    least ``k`` chunks and they fit ``token_budget`` — topped up with next-best chunks
    (``metadata["minirag_via"] == "fill"``) when the reasoning paths reach fewer. Each
    document is one chunk (``id``: the chunk id; ``metadata["doc_id"]``: its source document's
    id; ``document_text[metadata["start_index"]:metadata["end_index"]] == page_content``, with
    ``heading_path`` the section titles it starts under) and carries that document's metadata
    unchanged plus ``minirag_*`` keys
    (score, chunk/doc ids, via, entities, reasoning paths, key relationships, answer
    candidates, query entities), all JSON-serialisable.

    Build with :meth:`from_documents`, :meth:`from_texts` or :meth:`from_index`;
    ``retriever.model_copy(update={"mode": "naive", "k": 3})`` shares the same index.
    ``invoke(query, k=..., mode=..., filter=...)`` overrides ``k`` / ``mode`` / ``filter`` for one call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: MiniRAGIndex
    """The core index (graph, vectors and model backends)."""
    mode: Mode = "mini"
    """``mini`` (MiniRAG), ``light`` (LightRAG-style) or ``naive`` (dense top-k)."""
    k: int = Field(default=5, ge=1)
    """Number of documents to return."""
    token_budget: int = Field(default=6000, ge=1)
    """Most tokens (embedding tokenizer) of retrieved chunk text. When fewer than ``k`` chunks
    fit, the retrieval's notes say how many did (the ``minirag_retrieval`` event, the run's text
    and a warning of the ``minirag_core`` logger); raise it to get ``k``."""
    max_chunks_per_document: int | None = Field(default=None, ge=0)
    """At most this many chunks of one source document among the ``k`` (``None``: the index's
    setting, 2 unless changed; ``0``: no cap)."""
    filter: dict[str, Any] | None = None
    """Retrieve only from documents whose metadata pass this filter, in the filter dict of
    LangChain's vector stores: ``{"year": 2024}``, ``{"lang": {"$in": ["en", "de"]}}``,
    ``{"$and": [{"year": {"$gte": 2020}}, {"draft": {"$ne": True}}]}`` (operators ``$eq $ne $gt
    $gte $lt $lte $in $nin $contains``, ``$and $or $not``). ``invoke(query, filter=...)`` sets it
    for one call. The ``k`` returned are ``k`` passing chunks whenever that many pass."""

    @field_validator("filter")
    @classmethod
    def _readable_filter(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        as_filter(value)  # a filter that cannot be read fails here, with the reason
        return value
    session: MiniRAGSession | None = None
    """A conversation (``index.session()``): each call is its next turn; a follow-up naming no
    entity (or saying "he", "it") continues the last turn's entities, and a chunk an earlier turn
    returned comes back as ``[see passage N above]`` (``metadata["minirag_seen_before"]``) while new
    ones start with ``[passage N]`` (a follow-up returns only the new chunks scoring near its best:
    the session's ``admit_ratio``). ``None``: every call stands alone."""

    # -- construction ----------------------------------------------------------------------
    @staticmethod
    def build_index(llm: BaseChatModel | LLMBackend | None = None, embeddings: Embeddings | Embedder | None = None,
                    persist_directory: str | Path | None = None, **index_kwargs: Any) -> MiniRAGIndex:
        """A core ``MiniRAGIndex`` driven by LangChain models (or the embedded default)."""
        # (an in-memory core index gets Chroma collections of its own: see ChromaVectorStore)
        return MiniRAGIndex(persist_directory, llm=_as_backend(llm), embedder=_as_embedder(embeddings),
                            **index_kwargs)

    @classmethod
    def from_index(cls, index: MiniRAGIndex, **kwargs: Any) -> "MiniRAGRetriever":
        """Wrap an existing core index; ``kwargs`` are retriever fields (``k``, ``mode``, ...)."""
        return cls(index=index, **kwargs)

    @classmethod
    def from_documents(cls, documents: Iterable[Document], llm: BaseChatModel | LLMBackend | None = None,
                       embeddings: Embeddings | Embedder | None = None, persist_directory: str | Path | None = None,
                       ids: Sequence[str] | None = None, *, index_kwargs: dict[str, Any] | None = None,
                       workers: int | None = None, namespace: str | None = None, **kwargs: Any) -> "MiniRAGRetriever":
        """Index LangChain documents and return a retriever over them.

        ``llm`` (any chat model, or a core ``LLMBackend``) drives extraction and query
        mapping; ``embeddings`` (any ``Embeddings``) the vectors; with neither, the embedded
        offline default. ``persist_directory`` keeps the index on disk (re-opening it and
        adding the same documents again is a no-op). ``index_kwargs`` go to ``MiniRAGIndex``
        (``chroma_url``, ``settings``, ``extractor``, ...); other ``kwargs`` are retriever
        fields (``k``, ``mode``, ``token_budget``, ``tags``, ...). ``workers=N`` extracts and
        embeds in N processes (models that pickle: the embedded default does); the default, None,
        is one per core for a corpus large enough to pay for starting them (``MiniRAGIndex``).
        ``namespace`` names the index among several on one Chroma / FalkorDB server.
        """
        documents = list(documents)
        if not documents:
            raise ValueError("from_documents got no documents: nothing to index (check the path you loaded from)")
        index = cls.build_index(llm, embeddings, persist_directory,
                                **{"workers": workers, "namespace": namespace, **dict(index_kwargs or {})})
        retriever = cls(index=index, **kwargs)
        retriever.add_documents(documents, ids=ids)
        return retriever

    @classmethod
    def from_persist_directory(cls, persist_directory: str | Path, llm: BaseChatModel | LLMBackend | None = None,
                               embeddings: Embeddings | Embedder | None = None, *, namespace: str | None = None,
                               index_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> "MiniRAGRetriever":
        """Reopen an index that ``from_documents`` / ``from_texts`` persisted, without re-indexing.

        Pass the same ``embeddings`` as when it was built (the default: the bundled model)."""
        path = Path(persist_directory)
        if not (path / "manifest.json").exists():
            raise FileNotFoundError(f"no MiniRAG index at {path}: build one with "
                                    "MiniRAGRetriever.from_documents(..., persist_directory=...) first")
        return cls(index=cls.build_index(llm, embeddings, path, **{"namespace": namespace, **dict(index_kwargs or {})}),
                   **kwargs)

    @classmethod
    def from_texts(cls, texts: Iterable[str], metadatas: Sequence[dict[str, Any]] | None = None,
                   ids: Sequence[str] | None = None, llm: BaseChatModel | LLMBackend | None = None,
                   embeddings: Embeddings | Embedder | None = None, persist_directory: str | Path | None = None,
                   *, index_kwargs: dict[str, Any] | None = None, workers: int | None = None,
                   namespace: str | None = None, **kwargs: Any) -> "MiniRAGRetriever":
        """Like :meth:`from_documents`, from plain texts and optional metadata dicts."""
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"got {len(texts)} texts but {len(metadatas)} metadatas")
        documents = [Document(page_content=t, metadata=dict(metadatas[i]) if metadatas else {})
                     for i, t in enumerate(texts)]
        return cls.from_documents(documents, llm=llm, embeddings=embeddings, persist_directory=persist_directory,
                                  ids=ids, index_kwargs=index_kwargs, workers=workers, namespace=namespace, **kwargs)

    @classmethod
    async def afrom_documents(cls, documents: Iterable[Document], *args: Any, **kwargs: Any) -> "MiniRAGRetriever":
        """Async :meth:`from_documents` (indexing runs in a worker thread)."""
        return await asyncio.to_thread(cls.from_documents, list(documents), *args, **kwargs)

    @classmethod
    async def afrom_texts(cls, texts: Iterable[str], *args: Any, **kwargs: Any) -> "MiniRAGRetriever":
        """Async :meth:`from_texts`."""
        return await asyncio.to_thread(cls.from_texts, list(texts), *args, **kwargs)

    @classmethod
    async def afrom_persist_directory(cls, persist_directory: str | Path, *args: Any,
                                      **kwargs: Any) -> "MiniRAGRetriever":
        """Async :meth:`from_persist_directory` (the models and the graph load in a worker thread)."""
        return await asyncio.to_thread(cls.from_persist_directory, persist_directory, *args, **kwargs)

    # -- writes --------------------------------------------------------------------------------
    def add_documents(self, documents: Iterable[Document], ids: Sequence[str] | None = None) -> list[str]:
        """Insert (or update) documents in the core index; returns the ids of the accepted ones.

        A document's id is ``ids[i]``, else ``Document.id``, else a hash of its text.
        Unchanged documents are skipped; rejected ones (empty, binary) are logged and left out.
        """
        documents = list(documents)
        if ids is not None and len(ids) != len(documents):
            raise ValueError(f"got {len(documents)} documents but {len(ids)} ids")
        items, order = [], []
        for i, doc in enumerate(documents):
            doc_id = _document_id(doc.page_content, ids[i] if ids is not None else doc.id)
            items.append((doc_id, doc.page_content, dict(doc.metadata)))
            order.append(doc_id)
        report = self.index.insert(items)
        rejected = set(report.rejected)
        return [d for d in order if d not in rejected]

    async def aadd_documents(self, documents: Iterable[Document], ids: Sequence[str] | None = None) -> list[str]:
        return await asyncio.to_thread(self.add_documents, list(documents), ids)

    def delete(self, ids: str | Sequence[str]) -> list[str]:
        """Remove documents (by document id) and all they contributed; returns the ids removed."""
        return self.index.delete(ids)

    async def adelete(self, ids: str | Sequence[str]) -> list[str]:
        return await asyncio.to_thread(self.delete, ids)

    # -- retrieval -------------------------------------------------------------------------------
    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        params = super()._get_ls_params(**kwargs)
        params["ls_retriever_name"] = "minirag"
        params["ls_vector_store_provider"] = "minirag"
        params["ls_embedding_model"] = str(getattr(self.index.embedder, "name", ""))
        extra: dict[str, Any] = {"minirag_mode": kwargs.get("mode") or self.mode,
                                 "minirag_k": kwargs.get("k") or self.k}
        return {**params, **extra}  # type: ignore[return-value]

    def _plan(self, k: int | None, mode: str | None,
              metadata_filter: dict[str, Any] | None = None) -> tuple[int, str, dict[str, Any]]:
        k = self.k if k is None else int(k)
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        mode = check_mode(mode or self.mode)
        where = as_filter(self.filter if metadata_filter is None else metadata_filter)
        overrides: dict[str, Any] = {"top_k": k, "token_budget": self.token_budget, "fill": True, "filter": where}
        if self.max_chunks_per_document is not None:
            overrides["max_chunks_per_document"] = self.max_chunks_per_document
        return k, mode, overrides

    def _shortfall(self, result: RetrievalResult, k: int, overrides: dict[str, Any]) -> int:
        where = overrides["filter"]
        available = self.index.chunk_count() if where is None else len(self.index.registry.passing(where).chunks)
        return shortfall(result, k, available)

    def _top_up(self, result: RetrievalResult, extra: RetrievalResult, k: int) -> None:
        # Safeguard for a core result with fewer than k chunks although the index holds more.
        cap = self.max_chunks_per_document
        fill_to_k(result, extra, k, self.token_budget,
                  self.index.settings.max_chunks_per_document if cap is None else cap)

    def _top_up_overrides(self, overrides: dict[str, Any], k: int) -> dict[str, Any]:
        # The retriever applies the budget itself while topping up.
        return {**overrides, "top_k": 2 * k, "token_budget": 10**9}

    def _to_documents(self, result: RetrievalResult) -> list[Document]:
        # a chunk's own id: the chunks of one source document are distinct documents here
        return [Document(page_content=c.text, metadata=_chunk_metadata(c, result), id=c.chunk_id)
                for c in result.chunks]

    def _session_documents(self, turn: SessionResult) -> list[Document]:
        documents = self._to_documents(turn.shown_result())
        for chunk, document in zip(turn.result.chunks, documents):
            document.metadata.update(minirag_passage=turn.passages[chunk.chunk_id],
                                     minirag_seen_before=not turn.is_new(chunk.chunk_id))
        return documents

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                k: int | None = None, mode: Mode | None = None,
                                filter: dict[str, Any] | None = None) -> list[Document]:
        k, mode, overrides = self._plan(k, mode, filter)
        turn = None
        with active_callbacks(run_manager.get_child()):
            if self.session is not None:
                turn = self.session.query(query, mode=mode, **overrides)
                result = turn.result
            else:
                result = self.index.query(query, mode=mode, **overrides)
        if turn is None and self._shortfall(result, k, overrides):
            self._top_up(result, self.index.query(query, mode="naive", **self._top_up_overrides(overrides, k)), k)
        summary = _summary(result)
        run_manager.on_text(_summary_text(summary), minirag=summary)
        run_manager.get_child().on_custom_event("minirag_retrieval", summary, run_id=run_manager.run_id)
        return self._to_documents(result) if turn is None else self._session_documents(turn)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       k: int | None = None, mode: Mode | None = None,
                                       filter: dict[str, Any] | None = None) -> list[Document]:
        k, mode, overrides = self._plan(k, mode, filter)
        turn = None
        with active_callbacks(run_manager.get_child()):
            if self.session is not None:
                turn = await self.session.aquery(query, mode=mode, **overrides)
                result = turn.result
            else:
                result = await self.index.aquery(query, mode=mode, **overrides)
        # the store counts its chunks once, off the event loop
        if turn is None and await asyncio.to_thread(self._shortfall, result, k, overrides):
            extra = await self.index.aquery(query, mode="naive", **self._top_up_overrides(overrides, k))
            self._top_up(result, extra, k)
        summary = _summary(result)
        await run_manager.on_text(_summary_text(summary), minirag=summary)
        await run_manager.get_child().on_custom_event("minirag_retrieval", summary, run_id=run_manager.run_id)
        return self._to_documents(result) if turn is None else self._session_documents(turn)
