"""LLMBackend over llama-cpp-python: any GGUF model file, run in this process on the CPU."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import Any, Literal, Sequence

from minirag_core.llm.base import LLMError
from minirag_core.llm.prompt_fit import TRIM_MARKER, fit_tokens
from minirag_core.llm.usage import TokenUsage, record_usage

logger = logging.getLogger("minirag_core")

#: completion-style stops: the extraction format's end marker and a new prompt section
DEFAULT_STOP = ("<|COMPLETE|>", "\n---")
#: tokens kept free for BOS and for a cut text that tokenizes a little longer when sent again
RETOKENIZE_SLACK = 8
INSTALL_HINT = "pip install 'minirag[llamacpp]' (builds llama-cpp-python)"


_CALL_LOCKS: dict[int, threading.Lock] = {}
_CALL_LOCKS_GUARD = threading.Lock()


def in_process_llama(model: Any, attributes: Sequence[str] = ("client", "_model", "model")) -> Any:
    """The ``llama_cpp.Llama`` that ``model`` is or holds (a framework's llama.cpp model keeps it in
    an attribute), else None."""
    for candidate in (model, *(getattr(model, a, None) for a in attributes)):
        if type(candidate).__module__.split(".")[0] == "llama_cpp" and hasattr(candidate, "create_completion"):
            return candidate
    return None


def call_lock(model: Any) -> threading.Lock | None:
    """One lock per in-process llama.cpp model (None for anything else): a ``Llama`` decodes one
    call at a time, and two threads decoding at once abort the process."""
    llama = in_process_llama(model)
    if llama is None:
        return None
    with _CALL_LOCKS_GUARD:
        return _CALL_LOCKS.setdefault(id(llama), threading.Lock())


def load_llama(model_path: str, **kwargs: Any) -> Any:
    """A ``llama_cpp.Llama`` for ``model_path``, with a clear error if the library or file is missing."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise LLMError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from exc
    if not Path(model_path).is_file():
        raise LLMError(f"no GGUF model file at {model_path}")
    try:
        return Llama(model_path=str(model_path), **kwargs)
    except Exception as exc:  # noqa: BLE001 - a corrupt or foreign file
        raise LLMError(f"llama.cpp could not load {model_path}: {exc}") from exc


class LlamaCppBackend:
    """Completes prompts with a GGUF model through llama-cpp-python.

    ``prompt_style="completion"`` sends the prompt as raw text (base models);
    ``"chat"`` sends it as one user message through the model's chat template
    (instruction-tuned models; ``json_mode`` then asks llama.cpp for a JSON object).
    A prompt longer than the context window less ``max_tokens`` loses its middle
    (:mod:`minirag_core.llm.prompt_fit`) with a warning instead of failing. Calls to one
    ``Llama`` are serialised (:func:`call_lock`). Each call's token counts are llama.cpp's own
    ``usage``, added to ``usage`` and to any open meter.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        prompt_style: Literal["completion", "chat"] = "completion",
        n_ctx: int = 4096,
        max_tokens: int = 512,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        n_threads: int | None = None,
        seed: int = 0,
        llama: Any = None,
        **llama_kwargs: Any,
    ) -> None:
        if prompt_style not in ("completion", "chat"):
            raise ValueError(f"prompt_style must be 'completion' or 'chat', got {prompt_style!r}")
        if max_tokens < 1 or n_ctx <= max_tokens:
            raise ValueError(f"need 1 <= max_tokens < n_ctx (got max_tokens={max_tokens}, n_ctx={n_ctx})")
        self.model_path = str(model_path)
        self.name = f"llamacpp:{Path(self.model_path).name}"
        self.prompt_style = prompt_style
        self.n_ctx = int(n_ctx)
        self.max_tokens = int(max_tokens)
        self.temperature = temperature
        self.stop = list(DEFAULT_STOP if stop is None else stop)
        self._llama_kwargs = {"n_ctx": self.n_ctx, "seed": seed, "verbose": False, **llama_kwargs}
        if n_threads is not None:
            self._llama_kwargs["n_threads"] = n_threads
        self._llama = llama
        self._lock = threading.Lock()  # for a stand-in model; a real Llama's lock is shared (call_lock)
        self.usage = TokenUsage()
        self.trimmed_calls = 0

    def __repr__(self) -> str:
        return f"LlamaCppBackend(model_path={self.model_path!r}, prompt_style={self.prompt_style!r})"

    @property
    def llama(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (loaded on first use)."""
        if self._llama is None:
            self._llama = load_llama(self.model_path, **self._llama_kwargs)
        return self._llama

    def _context_size(self) -> int:
        n_ctx = getattr(self.llama, "n_ctx", None)
        return int(n_ctx()) if callable(n_ctx) else self.n_ctx

    def fit_prompt(self, prompt: str) -> str:
        """``prompt``, or its head and tail when it leaves no room for ``max_tokens`` of reply
        (chat style keeps a margin for the chat template)."""
        margin = 32 if self.prompt_style == "chat" else 0
        budget = self._context_size() - self.max_tokens - margin
        tokens = self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=False)
        marker = self.llama.tokenize(TRIM_MARKER.encode("utf-8"), add_bos=False, special=False)
        fitted = fit_tokens(tokens, budget - RETOKENIZE_SLACK, marker)
        if not fitted.dropped:
            return prompt
        self.trimmed_calls += 1
        logger.warning("%s: prompt of %d tokens exceeds the context (%d less %d for the reply); "
                       "cut %d tokens from its middle", self.name, len(tokens), self._context_size(),
                       self.max_tokens, fitted.dropped)
        return self.llama.detokenize(fitted.tokens).decode("utf-8", errors="ignore")

    def _call(self, prompt: str, json_mode: bool) -> dict[str, Any]:
        options: dict[str, Any] = {"max_tokens": self.max_tokens, "temperature": self.temperature,
                                   "stop": list(self.stop) or None}
        if self.prompt_style == "chat":
            if json_mode:
                options["response_format"] = {"type": "json_object"}
            return self.llama.create_chat_completion(messages=[{"role": "user", "content": prompt}], **options)
        return self.llama.create_completion(prompt=prompt, **options)

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        """The model's reply to ``prompt`` (raw text, or one chat message)."""
        with call_lock(self.llama) or self._lock:
            try:
                response = self._call(self.fit_prompt(prompt), json_mode)
            except LLMError:
                raise
            except Exception as exc:  # noqa: BLE001 - surfaced as the backend's failure
                raise LLMError(f"{self.name}: llama.cpp failed: {exc!r}") from exc
        usage = response.get("usage") or {}
        prompt_tokens, completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
        self.usage.add(self.name, prompt_tokens, completion_tokens)
        record_usage(self.name, prompt_tokens, completion_tokens)
        return _reply_text(response)

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        """:meth:`complete` in a worker thread (llama.cpp itself is synchronous)."""
        return await asyncio.to_thread(self.complete, prompt, json_mode=json_mode)


def _reply_text(response: dict[str, Any]) -> str:
    """The text of a completion or chat-completion response."""
    choices = response.get("choices") or [{}]
    choice = choices[0]
    if "message" in choice:
        return str((choice.get("message") or {}).get("content") or "")
    return str(choice.get("text") or "")
