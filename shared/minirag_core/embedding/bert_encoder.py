"""A BERT sentence encoder (mean pooling, L2-normalised) for small batches: tokenisation,
packing and pooling here; the forward pass on ONNX Runtime (``onnx_bert``) or, where that is
not installed, NumPy (``numpy_bert``). Neither imports torch, so a command-line query starts in
a fraction of the time.

Reads the same ``model.safetensors`` and ``tokenizer.json`` as sentence-transformers and agrees
with it to about 1e-6 in cosine similarity (tested).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Protocol

import numpy as np

from minirag_core.scores import one_blas_thread
from minirag_core.embedding.bert_weights import BertWeights

logger = logging.getLogger("minirag_core")


class BertForward(Protocol):
    """Hidden states (n, length, hidden) of token rows; ``bias`` (n, 1, 1 or length, length) is
    added to every attention score (0 where a token may attend, the float minimum where not)."""

    runtime: str

    def __call__(self, ids: np.ndarray, types: np.ndarray, positions: np.ndarray,
                 bias: np.ndarray) -> np.ndarray: ...


def bert_runtime(runtime: str | None = None) -> str:
    """``runtime`` if given, else ``MINIRAG_BERT_RUNTIME``, else ONNX Runtime when it is installed
    and NumPy when not."""
    from minirag_core.embedding.onnx_bert import onnx_runtime_available

    chosen = runtime or os.environ.get("MINIRAG_BERT_RUNTIME") or (
        "onnxruntime" if onnx_runtime_available() else "numpy")
    if chosen not in ("onnxruntime", "numpy"):
        raise ValueError(f"unknown BERT runtime {chosen!r}; choose onnxruntime or numpy")
    return chosen


def new_forward(weights: BertWeights, runtime: str | None = None, threads: int = 1) -> BertForward:
    """The forward pass on ``runtime`` (see :func:`bert_runtime`; ONNX Runtime on ``threads``
    intra-op threads, NumPy on one). Where ONNX Runtime was picked
    by default but cannot run the graph (an install too old for opset 20, say), NumPy with a
    warning; where it was asked for, the error."""
    if bert_runtime(runtime) == "onnxruntime":
        from minirag_core.embedding.onnx_bert import OnnxBertForward

        try:
            return OnnxBertForward(weights, threads)
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            if runtime or os.environ.get("MINIRAG_BERT_RUNTIME"):
                raise
            logger.warning("ONNX Runtime could not load the encoder (%s); using the NumPy pass", exc)
    from minirag_core.embedding.numpy_bert import NumpyBertForward

    return NumpyBertForward(weights)


def _normalised(pooled: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32."""
    return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)


#: padding a batch may add (in tokens) before a longer text starts a new batch instead
_PADDING_SLACK = 8
#: texts of up to this many word pieces in all are encoded in one packed pass: for a short
#: batch, reading the weights is most of the cost, so one pass for a question and its entity
#: names costs about what the question alone does (the attention over the packed sequence is
#: quadratic in this length, hence the bound)
_PACKED_TOKENS = 256


def _length_batches(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Split ``order`` (rows by ascending token length) into batches of at most ``batch_size``
    whose padding to their longest row stays within ``_PADDING_SLACK`` tokens."""
    batches: list[list[int]] = []
    rows: list[int] = []
    total = 0
    for i in order:
        if rows and (len(rows) >= batch_size or (len(rows) + 1) * lengths[i] - (total + lengths[i]) > _PADDING_SLACK):
            batches.append(rows)
            rows, total = [], 0
        rows.append(i)
        total += lengths[i]
    return batches + [rows] if rows else batches


class BertEncoder:
    """Mean-pooled, normalised sentence vectors from a local BERT checkpoint."""

    def __init__(self, model_dir: str | Path, max_tokens: int, runtime: str | None = None, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        weights = BertWeights.load(model_dir)
        self.dim = weights.hidden
        self.max_tokens = max_tokens
        self.forward: BertForward = new_forward(weights, runtime, threads)
        self.tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=weights.pad_id)

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        """Vectors of ``texts`` (BLAS on one thread; ONNX Runtime on its session's). Up to ``_PACKED_TOKENS`` word pieces in all
        (a question and its entity names): one packed pass. More: batches of similar token
        length, so short names are not padded to a long text's length."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        lengths = [sum(e.attention_mask) for e in encodings]
        with one_blas_thread():
            if sum(lengths) <= _PACKED_TOKENS:
                return self._encode_packed(encodings, lengths)
            order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
            out = np.empty((len(texts), self.dim), dtype=np.float32)
            for rows in _length_batches(order, lengths, batch_size):
                out[rows] = self._encode_padded([texts[i] for i in rows])
        return out

    def _encode_packed(self, encodings: list, lengths: list[int]) -> np.ndarray:
        """Every text's tokens one after another in a single sequence; attention stays within
        each text (a block-diagonal mask) and positions restart per text, so each vector is
        the one a pass of that text alone gives, while the weights are read once."""
        ids = np.concatenate([np.asarray(e.ids[:n], dtype=np.int64) for e, n in zip(encodings, lengths)])
        types = np.concatenate([np.asarray(e.type_ids[:n], dtype=np.int64) for e, n in zip(encodings, lengths)])
        positions = np.concatenate([np.arange(n) for n in lengths])
        text_of = np.repeat(np.arange(len(lengths)), lengths)
        bias = np.where(text_of[:, None] == text_of[None, :], 0.0, np.finfo(np.float32).min).astype(np.float32)
        x = self.forward(ids[None], types[None], positions, bias[None, None])[0]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return _normalised(np.add.reduceat(x, starts, axis=0) / np.asarray(lengths, dtype=np.float32)[:, None])

    def _encode_padded(self, texts: list[str]) -> np.ndarray:
        """One batch padded to its longest text (padding masked out of attention and pooling)."""
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        x = self.forward(ids, types, np.arange(ids.shape[1]), bias)
        return _normalised((x * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9))
