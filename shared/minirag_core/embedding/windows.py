"""Texts longer than the embedding model reads, embedded whole: windows that fit the model,
cut at sentence ends where possible and measured with the model's own tokenizer.

A BERT sentence encoder reads ``max_tokens`` word pieces (256 for all-MiniLM-L6-v2, two of
them ``[CLS]`` and ``[SEP]``) and silently drops the rest; a 1200-token chunk would be
represented by its first fifth. ``embed_windows`` embeds every window of every text once;
``combine_windows`` turns them into one vector per text.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable, Sequence

import numpy as np

from minirag_core.embedding.base import Embedder

#: word pieces a window shares with the previous one when no sentence starts near the cut
WINDOW_OVERLAP = 32
#: word pieces the model adds around every input (BERT's [CLS] and [SEP])
SPECIAL_TOKENS = 2
_SENTENCE_END = ".!?;:"


def _cut_points(text: str, offsets: Sequence[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Token indices a window may start at without splitting a word (so re-tokenising the
    slice gives the same pieces), and the subset that starts a sentence or a line."""
    cuts, sentences = [0], [0]
    for i in range(1, len(offsets)):
        prev_end, start = offsets[i - 1][1], offsets[i][0]
        gap = text[prev_end:start]
        before, after = text[prev_end - 1:prev_end], text[start:start + 1]
        if gap or not (before.isalnum() and after.isalnum()):
            cuts.append(i)
            if "\n" in gap or (gap and before in _SENTENCE_END):
                sentences.append(i)
    return cuts, sentences


def sentence_windows(text: str, offsets: Sequence[tuple[int, int]], size: int, overlap: int) -> list[str]:
    """Slices of ``text`` of at most ``size`` tokens (given each token's character offsets)
    that together cover it. A window ends before the last sentence start in its second half
    (else at the last word boundary); the next one starts at the first sentence start in the
    last ``overlap`` tokens (else ``overlap`` tokens back, at a word boundary)."""
    if size <= overlap or size < 1:
        raise ValueError("window size must be positive and larger than overlap")
    n = len(offsets)
    if n <= size:
        return [text] if text.strip() else []
    cuts, sentences = _cut_points(text, offsets)
    windows, start = [], 0
    while True:
        end = start + size
        if end >= n:
            windows.append(text[offsets[start][0]:offsets[-1][1]])
            return windows
        found = sentences[bisect_right(sentences, end) - 1]
        if found <= start + size // 2:
            found = cuts[bisect_right(cuts, end) - 1]
        end = found if found > start else end  # a single word longer than a window is split
        windows.append(text[offsets[start][0]:offsets[end - 1][1]])
        lowest = max(start + 1, end - overlap)
        i = bisect_left(sentences, lowest)
        if i < len(sentences) and sentences[i] < end:
            start = sentences[i]
        else:
            i = bisect_left(cuts, lowest)
            start = cuts[i] if i < len(cuts) and cuts[i] <= end else end


def text_windows(embedder: Embedder, text: str, overlap: int = WINDOW_OVERLAP) -> list[str]:
    """Windows of ``text`` the embedder reads whole: sentence-aligned when the embedder
    exposes token offsets (``token_offsets``), its ``token_windows`` otherwise."""
    size = max(1, int(embedder.max_tokens) - SPECIAL_TOKENS)
    overlap = min(overlap, size // 4)
    offsets: Callable[[str], Sequence[tuple[int, int]]] | None = getattr(embedder, "token_offsets", None)
    if offsets is not None:
        windows = sentence_windows(text, offsets(text), size, overlap)
    else:
        windows = embedder.token_windows(text, size, overlap) if embedder.count_tokens(text) > size else [text]
    return windows or [text]


def embed_windows(embedder: Embedder, texts: Sequence[str],
                  overlap: int = WINDOW_OVERLAP) -> tuple[np.ndarray, np.ndarray]:
    """The vector of every window of every text, and the text each row belongs to."""
    windows: list[str] = []
    owners: list[int] = []
    for position, text in enumerate(texts):
        pieces = text_windows(embedder, text, overlap)
        windows.extend(pieces)
        owners.extend([position] * len(pieces))
    if not windows:
        return np.zeros((0, int(embedder.dim)), dtype=np.float32), np.zeros(0, dtype=np.int64)
    return np.asarray(embedder.embed(windows), dtype=np.float32), np.asarray(owners, dtype=np.int64)


def combine_windows(vectors: np.ndarray, owners: np.ndarray, n: int) -> np.ndarray:
    """One L2-normalised vector per text: the normalised sum (direction of the mean) of its
    windows' vectors."""
    out = np.zeros((n, vectors.shape[1] if vectors.ndim == 2 else 0), dtype=np.float32)
    np.add.at(out, owners, vectors)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-12)


def embed_long(embedder: Embedder, texts: Sequence[str], overlap: int = WINDOW_OVERLAP) -> np.ndarray:
    """One vector per text that reflects all of it, however long (see ``combine_windows``)."""
    vectors, owners = embed_windows(embedder, texts, overlap)
    return combine_windows(vectors, owners, len(texts))
