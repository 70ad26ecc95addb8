"""Fit a prompt into a model's context window by cutting its middle, never failing.

MiniRAG's prompts put instructions first and the text the model works on (the chunk, the
question) last; the middle (examples, retrieved context) is what can go. The cut keeps the
first ``head_share`` of the budget and fills the rest from the end, joined by a marker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

TRIM_MARKER = "\n...\n"


@dataclass(frozen=True)
class FittedPrompt:
    """The tokens to send and how many of the prompt's tokens were cut."""

    tokens: list[int]
    dropped: int


def fit_tokens(tokens: Sequence[int], budget: int, marker: Sequence[int] = (),
               head_share: float = 0.25) -> FittedPrompt:
    """``tokens`` if they fit in ``budget``, else head + ``marker`` + tail of exactly ``budget``
    tokens (at least one token of the tail is always kept)."""
    tokens = list(tokens)
    if budget <= 0:
        raise ValueError(f"no room for a prompt: token budget {budget}")
    if len(tokens) <= budget:
        return FittedPrompt(tokens, 0)
    marker = list(marker) if len(marker) < budget // 2 else []
    room = budget - len(marker)
    head = min(int(room * head_share), room - 1)
    tail = room - head
    kept = tokens[:head] + marker + tokens[len(tokens) - tail:]
    return FittedPrompt(kept, len(tokens) - head - tail)
