"""Replica vectors for the scale benchmark: a text that is an original's text perturbed for
replica ``r`` (``scale_corpus.perturb``) gets the original's vector, turned by a small
deterministic noise, instead of a pass through the model.

Encoding costs the same per chunk at every size (it does not look at the index), so leaving it
out of the replicas lets a 100k-chunk index be built within a session, and the throughput
*excluding encoding* compares sizes: since per-chunk encoding is a constant ``e``, the full
throughput ratio ``(e + g(1k)) / (e + g(100k))`` is at least the ratio without it,
``g(1k) / g(100k)``. Originals (and any text that is not a recognisable replica) are encoded
for real; every call is timed (``seconds``), hits and misses counted.

The noise matches what a real replica does to a vector: on 150 passages and 300 names of the
development sets, the cosine between an original's vector and its replica's is 0.76-0.81 on
average (replicas 1-60); Gaussian noise of ``NOISE_SIGMA`` per dimension on a unit vector in
384 dimensions gives an expected cosine of ``1 / sqrt(1 + 384 * sigma**2)`` = 0.77.
"""

from __future__ import annotations

import re
import time
import zlib
from bisect import bisect_right
from typing import Any, Container, Mapping, Sequence

import numpy as np

NOISE_SIGMA = 0.042
_WORD = re.compile(r"\b[A-Za-z]{4,}\b")
_MAX_TAILS = 6
PREFIX_CHARS = 80


def _tails(text: str) -> list[str]:
    """Candidate replica suffixes ("q" and 1-3 letters ending a word), first words first."""
    found: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        for cut in range(3, len(word) - 1):
            tail = word[cut:].lower()
            if tail[0] == "q" and len(tail) <= 4 and tail not in found:
                found.append(tail)
        if len(found) >= _MAX_TAILS:
            break
    return found


def strip_suffix(text: str, known: Container[str],
                 prefixes: Mapping[str, str] | None = None) -> tuple[str, int, list[int]] | None:
    """The text in ``known`` that ``text`` is a replica of, whatever the letter case (names are
    stored normalised): ``(original, suffix length, end in text of every suffixed word)``.
    ``prefixes`` (first ``PREFIX_CHARS`` characters -> original) also finds the original of a
    replica cut at a fixed length (a relation's text keeps the start of its description)."""
    for tail in _tails(text):
        pattern = re.compile(r"\b([A-Za-z]{3,}?)" + tail + r"\b", re.IGNORECASE)
        ends = [m.end() for m in pattern.finditer(text)]
        if ends:
            original = pattern.sub(r"\1", text)
            if original in known:
                return original, len(tail), ends
            if prefixes is not None and len(original) >= PREFIX_CHARS and original[:PREFIX_CHARS] in prefixes:
                return prefixes[original[:PREFIX_CHARS]], len(tail), ends
    return None


def replica_offsets(offsets: Sequence[tuple[int, int]], tail: int, ends: list[int]) -> list[tuple[int, int]]:
    """The original's token offsets moved onto its replica: a position moves right by the
    suffixes of the words ending at or before it, so a word's last piece takes its suffix."""
    original_ends = [end - tail * (k + 1) for k, end in enumerate(ends)]
    return [(s + tail * bisect_right(original_ends, s), e + tail * bisect_right(original_ends, e)) for s, e in offsets]


class ReplicaEmbedder:
    """Wraps an embedder: a replica of a text it encoded while ``learning`` gets that vector
    plus deterministic noise (``reuse=True``), and the original's token offsets moved onto the
    replica, so its embedding windows are the original's windows, suffixed; everything else
    goes to the inner embedder. Other attributes (name, dim, tokenizer) are the inner one's."""

    def __init__(self, inner: Any, *, reuse: bool = True, sigma: float = NOISE_SIGMA) -> None:
        self.inner = inner
        self.reuse = reuse
        self.sigma = sigma
        self.learning = True  # the originals are being indexed: remember what they encode
        self._originals: dict[str, np.ndarray] = {}  # float16: half the memory, cosine > 0.9999
        self._offsets: dict[str, list[tuple[int, int]]] = {}
        self._prefixes: dict[str, str] = {}
        self.seconds = 0.0
        self.reused = 0
        self.encoded = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _turned(self, vector: np.ndarray, text: str) -> np.ndarray:
        rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
        out = vector.astype(np.float32) + rng.normal(0.0, self.sigma, vector.shape[0]).astype(np.float32)
        return out / max(float(np.linalg.norm(out)), 1e-12)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        found = strip_suffix(text, self._offsets) if self.reuse else None
        if found is not None:
            original, tail, ends = found
            return replica_offsets(self._offsets[original], tail, ends)
        offsets = list(self.inner.token_offsets(text))
        if self.reuse and self.learning:
            self._offsets[text] = offsets
        return offsets

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            rows: list[np.ndarray | None] = [None] * len(texts)
            todo: list[int] = []
            for i, text in enumerate(texts):
                known = self._originals.get(text) if self.reuse else None
                if known is not None:  # the same text: the same vector
                    rows[i] = known.astype(np.float32)
                    continue
                found = strip_suffix(text, self._originals, self._prefixes) if self.reuse else None
                if found is not None:
                    rows[i] = self._turned(self._originals[found[0]], text)
                    self.reused += 1
                else:
                    todo.append(i)
            if todo:
                vectors = np.asarray(self.inner.embed([texts[i] for i in todo]), dtype=np.float32)
                self.encoded += len(todo)
                for i, vector in zip(todo, vectors):
                    rows[i] = vector
                    if self.reuse and self.learning:
                        self._originals[texts[i]] = vector.astype(np.float16)
                        if len(texts[i]) >= PREFIX_CHARS:
                            self._prefixes.setdefault(texts[i][:PREFIX_CHARS], texts[i])
            if not rows:
                return np.zeros((0, int(self.inner.dim)), dtype=np.float32)
            return np.stack(rows)  # every row is filled: reused, repeated or encoded
        finally:
            self.seconds += time.perf_counter() - started
