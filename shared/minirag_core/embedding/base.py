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


def windows_from_offsets(text: str, offsets: Sequence[tuple[int, int]], size: int, overlap: int) -> list[str]:
    """Slices of ``text`` covering ``size`` tokens each, overlapping by ``overlap`` tokens,
    given each token's (start, end) character offsets."""
    if size <= overlap:
        raise ValueError("window size must be larger than overlap")
    if not offsets:
        return [text] if text.strip() else []
    windows, step = [], size - overlap
    for start in range(0, len(offsets), step):
        piece = offsets[start:start + size]
        windows.append(text[piece[0][0]:piece[-1][1]])
        if start + size >= len(offsets):
            break
    return windows
