"""LLMBackend on the official ``ollama`` client, with retries and clear errors."""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any

import httpx
import ollama
from tenacity import (
    AsyncRetrying,
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from minirag_core.llm.base import LLMError
from minirag_core.llm.usage import TokenUsage, record_usage

logger = logging.getLogger("minirag_core")

DEFAULT_HOST = "http://localhost:11434"


def _status(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None) if isinstance(exc, ollama.ResponseError) else None


def is_model_missing(exc: BaseException) -> bool:
    """A 404, or an error saying the model was not found."""
    if not isinstance(exc, ollama.ResponseError):
        return False
    message = str(getattr(exc, "error", exc)).lower()
    return _status(exc) == 404 or ("model" in message and "not found" in message)


def is_retryable(exc: BaseException) -> bool:
    """Connection errors, timeouts, HTTP 429 and 5xx are worth another try."""
    if isinstance(exc, ollama.ResponseError):
        code = _status(exc) or 0
        return (code >= 500 or code == 429) and not is_model_missing(exc)
    return isinstance(exc, (ConnectionError, httpx.TransportError, TimeoutError, asyncio.TimeoutError))


class OllamaBackend:
    """Completes prompts with a model served by Ollama (``/api/chat``, one user message)."""

    def __init__(
        self,
        model: str,
        host: str = DEFAULT_HOST,
        *,
        num_ctx: int = 8192,
        temperature: float = 0.0,
        timeout: float | None = 300.0,
        max_retries: int = 3,
        keep_alive: str | float | None = None,
        options: dict[str, Any] | None = None,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
    ) -> None:
        self.model = model
        self.host = host
        self.name = f"ollama:{model}"
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self.keep_alive = keep_alive
        self.options: dict[str, Any] = {"num_ctx": num_ctx, "temperature": temperature, **(options or {})}
        self._backoff = (backoff_base, backoff_max)
        self._client: ollama.Client | None = None
        self.usage = TokenUsage()  # every call's tokens as Ollama counted them (prompt_eval_count, eval_count)
        self._aclients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ollama.AsyncClient]" = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"OllamaBackend(model={self.model!r}, host={self.host!r})"

    # -- clients ---------------------------------------------------------------
    def _sync_client(self) -> ollama.Client:
        if self._client is None:
            self._client = ollama.Client(host=self.host, timeout=self.timeout)
        return self._client

    def _async_client(self) -> ollama.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._aclients.get(loop)
        if client is None:
            client = ollama.AsyncClient(host=self.host, timeout=self.timeout)
            self._aclients[loop] = client
        return client

    # -- requests --------------------------------------------------------------
    def _chat_kwargs(self, prompt: str, json_mode: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "options": dict(self.options),
            "stream": False,
        }
        if json_mode:
            kwargs["format"] = "json"
        if self.keep_alive is not None:
            kwargs["keep_alive"] = self.keep_alive
        return kwargs

    def _retry_args(self) -> dict[str, Any]:
        base, cap = self._backoff
        return {
            "retry": retry_if_exception(is_retryable),
            "stop": stop_after_attempt(self.max_retries + 1),
            "wait": wait_exponential(multiplier=base, max=cap),
            "reraise": True,
            "before_sleep": self._log_retry,
        }

    def _log_retry(self, state: Any) -> None:
        exc = state.outcome.exception() if state.outcome else None
        logger.warning("%s at %s: attempt %d failed (%r); retrying", self.name, self.host, state.attempt_number, exc)

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        """Send ``prompt`` as one user message; return the reply text."""
        kwargs = self._chat_kwargs(prompt, json_mode)
        try:
            for attempt in Retrying(**self._retry_args()):
                with attempt:
                    response = self._sync_client().chat(**kwargs)
        except (RetryError, Exception) as exc:  # noqa: BLE001 - translated below
            raise self._to_llm_error(exc) from exc
        return self._counted(response)

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        """Async :meth:`complete`."""
        kwargs = self._chat_kwargs(prompt, json_mode)
        try:
            async for attempt in AsyncRetrying(**self._retry_args()):
                with attempt:
                    response = await self._async_client().chat(**kwargs)
        except (RetryError, Exception) as exc:  # noqa: BLE001 - translated below
            raise self._to_llm_error(exc) from exc
        return self._counted(response)

    def _counted(self, response: Any) -> str:
        """The reply text, after adding the response's token counts to ``usage`` and open meters."""
        prompt_tokens, completion_tokens = _field(response, "prompt_eval_count"), _field(response, "eval_count")
        self.usage.add(self.name, prompt_tokens, completion_tokens)
        record_usage(self.name, prompt_tokens, completion_tokens)
        return _content(response)

    # -- errors ----------------------------------------------------------------
    def _to_llm_error(self, exc: BaseException) -> LLMError:
        """An LLMError naming model and host, with the likely fix."""
        if isinstance(exc, LLMError):
            return exc
        if isinstance(exc, RetryError) and exc.last_attempt.exception() is not None:
            exc = exc.last_attempt.exception()  # type: ignore[assignment]
        tries = f"after {self.max_retries + 1} attempt(s)"
        code = _status(exc)
        if is_model_missing(exc):
            return LLMError(
                f"model '{self.model}' not found on Ollama at {self.host}: run `ollama pull {self.model}` ({exc})"
            )
        if code is not None:
            return LLMError(f"Ollama at {self.host} failed for model '{self.model}' {tries}: HTTP {code}: {exc}")
        if isinstance(exc, (httpx.TimeoutException, TimeoutError, asyncio.TimeoutError)):
            return LLMError(
                f"Ollama at {self.host} timed out ({self.timeout}s) for model '{self.model}' {tries}; "
                "raise `timeout` or use a smaller model / context"
            )
        if isinstance(exc, (ConnectionError, httpx.TransportError)):
            return LLMError(
                f"cannot reach Ollama at {self.host} for model '{self.model}' {tries}: "
                f"is `ollama serve` running? ({exc})"
            )
        return LLMError(f"Ollama at {self.host}, model '{self.model}': unexpected error {exc!r}")


def _field(response: Any, name: str) -> Any:
    """A top-level field of a chat response (object or dict), None when absent."""
    value = getattr(response, name, None)
    return response.get(name) if value is None and isinstance(response, dict) else value


def _content(response: Any) -> str:
    """The reply text of a chat response (object or dict)."""
    message = getattr(response, "message", None)
    if message is None and isinstance(response, dict):
        message = response.get("message")
    content = getattr(message, "content", None)
    if content is None and isinstance(message, dict):
        content = message.get("content")
    return content or ""
