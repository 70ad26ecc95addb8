"""BERT's forward pass in NumPy: the fallback where ONNX Runtime is not installed."""

from __future__ import annotations

import math

import numpy as np

from minirag_core.embedding.bert_weights import BertWeights

#: Python floats: a NumPy float64 scalar would turn float32 arrays into float64 (NEP 50), and
#: every later product would then convert its weights to float64 (5-10x slower)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
#: erf by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7): NumPy ufuncs only, ~2.5x faster than
#: ``scipy.special.erf`` on float32
_P = 0.3275911
_A1, _A2, _A3, _A4, _A5 = 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429


def gelu(x: np.ndarray) -> np.ndarray:
    """``0.5 x (1 + erf(x / sqrt 2))``, in place on temporaries."""
    z = np.abs(x)
    z *= _INV_SQRT2
    t = _P * z
    t += 1.0
    np.reciprocal(t, out=t)
    tail = t * _A5  # 1 - erf(z) = tail * exp(-z^2), tail a polynomial in t
    for a in (_A4, _A3, _A2, _A1):
        tail += a
        tail *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    tail *= z
    tail *= x
    tail *= 0.5  # now 0.5 x (1 - erf(|x| / sqrt 2))
    return np.where(x >= 0, x - tail, tail)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class NumpyBertForward:
    """Hidden states of token rows, computed with NumPy (BLAS for the products)."""

    runtime = "numpy"

    def __init__(self, weights: BertWeights) -> None:
        self.w = weights

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        rows = x.reshape(-1, x.shape[-1]) @ self.w[f"{name}.weight_t"] + self.w[f"{name}.bias"]
        return rows.reshape(*x.shape[:-1], rows.shape[-1])

    def __call__(self, ids: np.ndarray, types: np.ndarray, positions: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """Hidden states (n, length, hidden) of token rows ``ids`` (n, length); ``bias`` is added
        to every attention score (0 where a token may attend, the float minimum where not)."""
        w = self.w
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions][None]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], w.eps)
        hidden = x.shape[-1]
        head = hidden // w.heads
        for layer in range(w.layers):
            p = f"encoder.layer.{layer}"

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, length, w.heads, head).transpose(0, 2, 1, 3)

            q = split(self._linear(x, f"{p}.attention.self.query"))
            k = split(self._linear(x, f"{p}.attention.self.key"))
            v = split(self._linear(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attention = (scores / scores.sum(axis=-1, keepdims=True)) @ v
            attention = attention.transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = _layer_norm(self._linear(attention, f"{p}.attention.output.dense") + x,
                            w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"],
                            w.eps)
            inner = gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = _layer_norm(self._linear(inner, f"{p}.output.dense") + x, w[f"{p}.output.LayerNorm.weight"],
                            w[f"{p}.output.LayerNorm.bias"], w.eps)
        return x
