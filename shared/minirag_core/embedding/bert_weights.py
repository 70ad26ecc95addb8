"""A BERT checkpoint's configuration and weights, read from ``config.json`` and
``model.safetensors`` (the files sentence-transformers reads), for the forward passes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def _is_dense(name: str, value: np.ndarray) -> bool:
    """A dense layer's weight matrix (the embedding tables are looked up, not multiplied)."""
    return value.ndim == 2 and name.endswith(".weight") and not name.startswith("embeddings.")


@dataclass(frozen=True)
class BertWeights:
    """Weights by name without the ``bert.`` prefix; each dense layer's matrix is stored
    transposed and contiguous as ``<layer>.weight_t`` (``x @ W`` without a strided copy)."""

    tensors: dict[str, np.ndarray]
    heads: int
    layers: int
    eps: float
    pad_id: int

    @classmethod
    def load(cls, model_dir: str | Path) -> BertWeights:
        from safetensors.numpy import load_file

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        raw = {k.removeprefix("bert."): v for k, v in load_file(str(model_dir / "model.safetensors")).items()}
        tensors = {(f"{k}_t" if _is_dense(k, v) else k): (np.ascontiguousarray(v.T) if _is_dense(k, v) else v)
                   for k, v in raw.items()}
        return cls(tensors, int(config["num_attention_heads"]), int(config["num_hidden_layers"]),
                   float(config.get("layer_norm_eps", 1e-12)), int(config.get("pad_token_id", 0)))

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[name]

    @property
    def hidden(self) -> int:
        return int(self["embeddings.word_embeddings.weight"].shape[1])
