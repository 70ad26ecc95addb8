"""Token offsets for embedders that wrap another library's model (LlamaIndex, LangChain), and
the token counts and windows every such wrapper derives from them the same way.

A wrapper measures text with the bundled all-MiniLM-L6-v2 word-piece tokenizer or by
whitespace; either way it exposes ``token_offsets``, so ``embedding.windows.text_windows``
cuts its long texts at sentence ends exactly as it does for the core embedder, and its
``token_windows`` are slices of the text (never words rejoined with single spaces).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from minirag_core.embedding.base import windows_from_offsets

__all__ = ["OffsetTokens", "bundled_offsets", "offsets_for", "whitespace_offsets"]

TokenOffsets = Callable[[str], list[tuple[int, int]]]
_NON_SPACE = re.compile(r"\S+")


def whitespace_offsets(text: str) -> list[tuple[int, int]]:
    """(start, end) of every run of non-space characters."""
    return [m.span() for m in _NON_SPACE.finditer(text)]


@lru_cache(maxsize=1)
def _bundled_tokenizer() -> Any:
    from tokenizers import Tokenizer

    from minirag_core.embedding.sentence_transformer import bundled_model_path

    tokenizer = Tokenizer.from_file(str(Path(bundled_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def bundled_offsets(text: str) -> list[tuple[int, int]]:
    """(start, end) of every all-MiniLM-L6-v2 word piece of ``text`` (no special tokens)."""
    return [tuple(o) for o in _bundled_tokenizer().encode(text, add_special_tokens=False).offsets]


def offsets_for(kind: str) -> TokenOffsets:
    """The offsets function named ``kind``: ``"minilm"`` (word pieces) or ``"whitespace"``."""
    if kind == "minilm":
        return bundled_offsets
    if kind == "whitespace":
        return whitespace_offsets
    raise ValueError(f"tokenizer must be 'minilm' or 'whitespace', got {kind!r}")


class OffsetTokens:
    """``count_tokens`` and ``token_windows`` from the subclass's ``token_offsets``."""

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        return len(self.token_offsets(text))

    def token_windows(self, text: str, size: int, overlap: int) -> list[str]:
        """Windows of ``size`` tokens overlapping by ``overlap``, as slices of ``text``."""
        return windows_from_offsets(text, self.token_offsets(text), size, overlap)
