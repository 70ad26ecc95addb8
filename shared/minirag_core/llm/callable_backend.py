"""Wrap any completion function as an LLMBackend (adapters, scripted test stand-ins)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable

from minirag_core.llm.base import LLMError


def _accepts_json_mode(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "json_mode" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class CallableBackend:
    """An LLMBackend around ``fn(prompt[, json_mode=...]) -> str``.

    ``afn`` is an optional async twin; without it :meth:`acomplete` runs ``fn`` in a
    worker thread. Exceptions other than :class:`LLMError` are wrapped in one.
    """

    def __init__(
        self,
        name: str,
        fn: Callable[..., str],
        afn: Callable[..., Awaitable[str]] | None = None,
    ) -> None:
        self.name = name
        self._fn = fn
        self._afn = afn
        self._fn_json = _accepts_json_mode(fn)
        self._afn_json = afn is not None and _accepts_json_mode(afn)

    def __repr__(self) -> str:
        return f"CallableBackend(name={self.name!r})"

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        """Call the wrapped function."""
        try:
            reply = self._fn(prompt, json_mode=json_mode) if self._fn_json else self._fn(prompt)
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - surfaced as the backend's failure
            raise LLMError(f"{self.name}: {exc!r}") from exc
        return "" if reply is None else str(reply)

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        """Call the async function, or the sync one in a worker thread."""
        if self._afn is None:
            return await asyncio.to_thread(self.complete, prompt, json_mode=json_mode)
        try:
            reply = await (self._afn(prompt, json_mode=json_mode) if self._afn_json else self._afn(prompt))
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise LLMError(f"{self.name}: {exc!r}") from exc
        return "" if reply is None else str(reply)
