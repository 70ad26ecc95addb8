"""The language-model protocol the core calls; one backend per module beside this one."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class LLMError(RuntimeError):
    """A model backend failed after its retries; the message names host and model."""


@runtime_checkable
class LLMBackend(Protocol):
    """Anything that completes a prompt, sync and async.

    ``name`` identifies the model in the call cache, so a different model never
    reuses another model's replies.
    """

    name: str

    def complete(self, prompt: str, *, json_mode: bool = False) -> str: ...

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str: ...
