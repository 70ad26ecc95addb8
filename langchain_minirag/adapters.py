"""Adapters from LangChain models to the core's backend protocols.

``ChatModelBackend`` wraps any ``BaseChatModel`` as the core's ``LLMBackend`` (extraction,
query mapping, answers); ``LangChainEmbedder`` wraps any ``Embeddings`` as the core's
``Embedder``. Neither holds any MiniRAG logic.
"""

from __future__ import annotations

import asyncio
import re
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, Iterator, Sequence

import numpy as np
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from minirag_core.embedding.tokens import OffsetTokens, offsets_for
from minirag_core.llm.base import LLMError
from minirag_core.llm.llamacpp_backend import call_lock
from minirag_core.llm.usage import record_usage

_MODEL_ATTRS = ("model", "model_name", "model_id", "deployment_name", "repo_id")
_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)

# Callbacks of the LangChain run in progress (set by MiniRAGRetriever around a core query),
# so that model calls made by the core (query mapping) show up as children of the retriever
# run in tracing. Context variables follow both threads and asyncio tasks.
_ACTIVE_CALLBACKS: ContextVar[Any] = ContextVar("langchain_minirag_callbacks", default=None)


@contextmanager
def active_callbacks(callbacks: Any) -> Iterator[None]:
    """Make ``callbacks`` the parent of chat-model calls made by the core inside this block."""
    token = _ACTIVE_CALLBACKS.set(callbacks)
    try:
        yield
    finally:
        _ACTIVE_CALLBACKS.reset(token)


def _model_label(obj: Any) -> str | None:
    for attr in _MODEL_ATTRS:
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def llm_result_usage(result: Any) -> tuple[int | None, int | None]:
    """(input, output) tokens of a chat model's ``LLMResult``: its message's ``usage_metadata``,
    else the provider's ``llm_output`` counts (``token_usage``/``usage``, as llama.cpp's and
    OpenAI-style models put them); (None, None) where the model reported none."""
    for generations in getattr(result, "generations", None) or []:
        for generation in generations:
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if usage:
                return usage.get("input_tokens"), usage.get("output_tokens")
    output = getattr(result, "llm_output", None) or {}
    usage = output.get("token_usage") or output.get("usage") or {}
    if not isinstance(usage, dict):
        usage = dict(getattr(usage, "__dict__", {}))
    return usage.get("prompt_tokens"), usage.get("completion_tokens")


class _UsageCatcher(BaseCallbackHandler):
    """Keeps the token counts of the one chat-model call it is attached to."""

    def __init__(self) -> None:
        self.usage: tuple[int | None, int | None] = (None, None)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.usage = llm_result_usage(response)


def _with_handler(callbacks: Any, handler: BaseCallbackHandler) -> Any:
    """``callbacks`` (None, a list or a manager) plus ``handler`` for this call only."""
    if callbacks is None:
        return [handler]
    if isinstance(callbacks, list):
        return [*callbacks, handler]
    manager = callbacks.copy()
    manager.add_handler(handler, inherit=False)
    return manager


def _message_text(message: BaseMessage | Any) -> str:
    if isinstance(message, BaseMessage):
        return str(message.text)
    return "" if message is None else str(message)


class ChatModelBackend:
    """The core's ``LLMBackend`` over any LangChain chat model (``ChatOllama``, ``ChatOpenAI``, ...).

    ``complete`` sends the prompt as one ``HumanMessage`` and returns the reply's text.
    ``json_mode_kwargs`` are passed to the model when the core asks for JSON (query
    mapping); by default ``{"format": "json"}`` for ``ChatOllama`` and nothing otherwise
    (the core's parsers tolerate prose around the JSON). A leading ``<think>...</think>``
    block (reasoning models) is removed. Failures are raised as ``LLMError``.
    """

    def __init__(self, chat_model: BaseChatModel, *, name: str | None = None,
                 json_mode_kwargs: dict[str, Any] | None = None) -> None:
        if not isinstance(chat_model, BaseChatModel):
            raise TypeError(f"expected a LangChain BaseChatModel, got {type(chat_model).__name__}")
        self.chat_model = chat_model
        if name is None:
            try:
                llm_type = chat_model._llm_type
            except Exception:  # noqa: BLE001 - a name is all we need
                llm_type = type(chat_model).__name__
            model = _model_label(chat_model)
            name = f"langchain:{llm_type}" + (f":{model}" if model else "")
        self.name = name
        if json_mode_kwargs is None:
            json_mode_kwargs = {"format": "json"} if type(chat_model).__name__ == "ChatOllama" else {}
        self.json_mode_kwargs = dict(json_mode_kwargs)
        self._lock = call_lock(chat_model)  # an in-process llama.cpp model takes one call at a time

    def __repr__(self) -> str:
        return f"ChatModelBackend(name={self.name!r})"

    def _call_args(self, prompt: str, json_mode: bool) -> tuple[list[BaseMessage], dict[str, Any], _UsageCatcher]:
        kwargs: dict[str, Any] = dict(self.json_mode_kwargs) if json_mode else {}
        catcher = _UsageCatcher()
        config = {"callbacks": _with_handler(_ACTIVE_CALLBACKS.get(), catcher), "tags": ["minirag"]}
        return [HumanMessage(content=prompt)], {"config": config, **kwargs}, catcher

    def _reply_text(self, reply: Any, catcher: _UsageCatcher) -> str:
        """The reply's text; the call's token counts, as the chat model reported them to the
        callbacks (the run's own handlers see the same), go to the core's token meters."""
        record_usage(self.name, *catcher.usage)
        return _THINK.sub("", _message_text(reply), count=1)

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        messages, kwargs, catcher = self._call_args(prompt, json_mode)
        try:
            with self._lock or nullcontext():
                reply = self.chat_model.invoke(messages, **kwargs)
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - surfaced as the backend's failure
            raise LLMError(f"{self.name}: {exc!r}") from exc
        return self._reply_text(reply, catcher)

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        if self._lock is not None:  # one call at a time, in a worker thread
            return await asyncio.to_thread(self.complete, prompt, json_mode=json_mode)
        messages, kwargs, catcher = self._call_args(prompt, json_mode)
        try:
            reply = await self.chat_model.ainvoke(messages, **kwargs)
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise LLMError(f"{self.name}: {exc!r}") from exc
        return self._reply_text(reply, catcher)


class LangChainEmbedder(OffsetTokens):
    """The core's ``Embedder`` over any LangChain ``Embeddings``.

    Texts are embedded with ``embed_documents`` and L2-normalised. Chunk sizes and token
    budgets are measured with the bundled all-MiniLM-L6-v2 tokenizer (``tokenizer="minilm"``,
    loaded on first use) or by whitespace (``tokenizer="whitespace"``). ``dim`` is probed
    with one ``embed_query`` call when not given. ``name`` (recorded in the index manifest)
    is the class name plus the model attribute, if any.
    """

    def __init__(self, embeddings: Embeddings, *, dim: int | None = None, max_tokens: int = 512,
                 tokenizer: str = "minilm", name: str | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise TypeError(f"expected LangChain Embeddings, got {type(embeddings).__name__}")
        self.embeddings = embeddings
        if name is None:
            model = _model_label(embeddings)
            name = f"langchain:{type(embeddings).__name__}" + (f":{model}" if model else "")
        self.name = name
        self.max_tokens = int(max_tokens)
        self._offsets = offsets_for(tokenizer)
        self.dim = int(dim) if dim is not None else len(embeddings.embed_query("dimension probe"))

    def __repr__(self) -> str:
        return f"LangChainEmbedder(name={self.name!r}, dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape != (len(texts), self.dim):
            raise ValueError(f"{self.name} returned embeddings of shape {vectors.shape}, "
                             f"expected ({len(texts)}, {self.dim})")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of every token of ``text``; ``count_tokens`` and
        ``token_windows`` follow from them (:class:`minirag_core.embedding.tokens.OffsetTokens`)."""
        return self._offsets(text)
