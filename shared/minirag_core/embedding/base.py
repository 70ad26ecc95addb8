"""The embedding protocol: vectors and the tokenizer that measures chunks and budgets."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; ``name`` is recorded in the manifest."""

    name: str
    dim: int
    max_tokens: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...

    def token_windows(self, text: str, size: int, overlap: int) -> list[str]: ...
