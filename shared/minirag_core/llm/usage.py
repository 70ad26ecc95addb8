"""Token usage of model calls: each backend reports the counts its server or library returned,
and every meter open around the call adds them up (per query, per index build)."""

from __future__ import annotations

import functools
import inspect
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

_LOCK = threading.Lock()


@dataclass
class TokenUsage:
    """Prompt and completion tokens of some model calls, as the backend counted them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    #: calls whose backend returned no counts (they add to ``calls`` only)
    uncounted_calls: int = 0
    by_model: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, model: str, prompt_tokens: int | None, completion_tokens: int | None) -> None:
        with _LOCK:
            self.calls += 1
            if prompt_tokens is None and completion_tokens is None:
                self.uncounted_calls += 1
                return
            self.prompt_tokens += int(prompt_tokens or 0)
            self.completion_tokens += int(completion_tokens or 0)
            row = self.by_model.setdefault(model, [0, 0, 0])
            row[0] += int(prompt_tokens or 0)
            row[1] += int(completion_tokens or 0)
            row[2] += 1

    def merge(self, other: "TokenUsage") -> None:
        """Add ``other``'s counts to these."""
        with _LOCK:
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens
            self.calls += other.calls
            self.uncounted_calls += other.uncounted_calls
            for model, (p, c, n) in other.by_model.items():
                row = self.by_model.setdefault(model, [0, 0, 0])
                row[0], row[1], row[2] = row[0] + p, row[1] + c, row[2] + n

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "calls": self.calls, "uncounted_calls": self.uncounted_calls}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "TokenUsage":
        data = data or {}
        return cls(int(data.get("prompt_tokens", 0)), int(data.get("completion_tokens", 0)),
                   int(data.get("calls", 0)), int(data.get("uncounted_calls", 0)))


_METERS: ContextVar[tuple[TokenUsage, ...]] = ContextVar("minirag_token_meters", default=())


@contextmanager
def metered(usage: TokenUsage | None = None) -> Iterator[TokenUsage]:
    """Count the tokens of every model call made inside this block (this thread or task and the
    tasks and ``asyncio.to_thread`` workers it starts) into ``usage`` (a new one by default)."""
    meter = usage if usage is not None else TokenUsage()
    token = _METERS.set(_METERS.get() + (meter,))
    try:
        yield meter
    finally:
        _METERS.reset(token)


def record_usage(model: str, prompt_tokens: int | None, completion_tokens: int | None) -> None:
    """Called by a backend after each call with the counts the model reported (None if none)."""
    for meter in _METERS.get():
        meter.add(model, prompt_tokens, completion_tokens)


def counts_tokens(method: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a sync or async query method: the tokens of the model calls it makes are set on what
    it returns as ``token_usage`` (and on an answer's ``result`` too)."""

    def attach(out: Any, usage: TokenUsage) -> Any:
        for target in (out, getattr(out, "result", None)):
            if target is not None and hasattr(target, "token_usage"):
                target.token_usage = usage.to_dict()
        return out

    if inspect.iscoroutinefunction(method):
        @functools.wraps(method)
        async def ameasured(*args: Any, **kwargs: Any) -> Any:
            with metered() as usage:
                out = await method(*args, **kwargs)
            return attach(out, usage)

        return ameasured

    @functools.wraps(method)
    def measured(*args: Any, **kwargs: Any) -> Any:
        with metered() as usage:
            out = method(*args, **kwargs)
        return attach(out, usage)

    return measured
