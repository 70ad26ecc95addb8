"""BERT's forward pass on ONNX Runtime: the graph is built in memory from the checkpoint's
weights (``onnx`` helpers; nothing is downloaded or exported from torch) and run on one
intra-op thread. For a question it is about twice as fast as the NumPy pass (fused kernels,
less per-operation overhead): ``benchmarks/scale/bench_embed.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from minirag_core.embedding.bert_weights import BertWeights

#: ``Gelu`` joined the default ONNX domain in opset 20
_OPSET = 20


class _GraphBuilder:
    """Collects nodes and weight initialisers, naming each output after its position."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def weight(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        out = f"v{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attributes))
        return out


def bert_graph(w: BertWeights) -> bytes:
    """The serialised ONNX model: inputs ``ids``, ``types`` (n, L), ``positions`` (L) and the
    attention ``bias`` (n, 1, 1 or L, L); output ``hidden`` (n, L, hidden)."""
    from onnx import TensorProto, helper

    g = _GraphBuilder()
    hidden, head = w.hidden, w.hidden // w.heads

    def norm(x: str, name: str) -> str:
        return g.op("LayerNormalization", x, g.weight(f"{name}.weight", w[f"{name}.weight"]),
                    g.weight(f"{name}.bias", w[f"{name}.bias"]), axis=-1, epsilon=w.eps)

    def linear(x: str, name: str) -> str:
        return g.op("Add", g.op("MatMul", x, g.weight(f"{name}.weight_t", w[f"{name}.weight_t"])),
                    g.weight(f"{name}.bias", w[f"{name}.bias"]))

    words = g.op("Gather", g.weight("word", w["embeddings.word_embeddings.weight"]), "ids")
    places = g.op("Gather", g.weight("position", w["embeddings.position_embeddings.weight"]), "positions")
    kinds = g.op("Gather", g.weight("token_type", w["embeddings.token_type_embeddings.weight"]), "types")
    x = norm(g.op("Add", g.op("Add", words, places), kinds), "embeddings.LayerNorm")
    to_heads = g.weight("to_heads", np.array([0, 0, w.heads, head], dtype=np.int64))
    to_hidden = g.weight("to_hidden", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.weight("scale", np.array(1.0 / math.sqrt(head), dtype=np.float32))
    for layer in range(w.layers):
        p = f"encoder.layer.{layer}"

        def heads(name: str, perm: list[int]) -> str:
            return g.op("Transpose", g.op("Reshape", linear(x, f"{p}.attention.self.{name}"), to_heads), perm=perm)

        scores = g.op("Add", g.op("Mul", g.op("MatMul", heads("query", [0, 2, 1, 3]), heads("key", [0, 2, 3, 1])),
                                  scale), "bias")
        attention = g.op("MatMul", g.op("Softmax", scores, axis=-1), heads("value", [0, 2, 1, 3]))
        attention = g.op("Reshape", g.op("Transpose", attention, perm=[0, 2, 1, 3]), to_hidden)
        x = norm(g.op("Add", linear(attention, f"{p}.attention.output.dense"), x), f"{p}.attention.output.LayerNorm")
        inner = g.op("Gelu", linear(x, f"{p}.intermediate.dense"))
        x = norm(g.op("Add", linear(inner, f"{p}.output.dense"), x), f"{p}.output.LayerNorm")
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        g.nodes, "bert_encoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n", "length"]),
         helper.make_tensor_value_info("types", TensorProto.INT64, ["n", "length"]),
         helper.make_tensor_value_info("positions", TensorProto.INT64, ["length"]),
         helper.make_tensor_value_info("bias", TensorProto.FLOAT, ["n", 1, "rows", "length"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["n", "length", hidden])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)]).SerializeToString()


def cache_dir() -> Path:
    """Where built encoder graphs are kept: ``MINIRAG_CACHE_DIR``, else ``$XDG_CACHE_HOME/minirag``."""
    found = os.environ.get("MINIRAG_CACHE_DIR")
    return Path(found) if found else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "minirag"


def graph_key(w: BertWeights) -> str:
    """A digest of this module's code, the configuration and a sample of every tensor: the built
    graph's name in the cache (a changed checkpoint or graph builder gets a new one)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(repr((_OPSET, w.heads, w.layers, w.eps)).encode())
    for name in sorted(w.tensors):
        tensor = w.tensors[name]
        digest.update(f"{name}{tensor.shape}{tensor.dtype}".encode())
        digest.update(np.ascontiguousarray(tensor.ravel()[:: max(1, tensor.size // 512)]).tobytes())
    return digest.hexdigest()[:32]


def cached_graph(w: BertWeights) -> str | bytes:
    """The path of the serialised graph, built once per checkpoint and kept in :func:`cache_dir`
    (building it costs about half a second of a one-shot query's start); the bytes where the cache
    cannot be written."""
    path = cache_dir() / f"bert-{graph_key(w)}.onnx"
    if path.exists():
        return str(path)
    model = bert_graph(w)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as handle:
            handle.write(model)
        os.replace(handle.name, path)
    except OSError:
        return model
    return str(path)


class OnnxBertForward:
    """Hidden states of token rows, computed by an ONNX Runtime session on ``threads`` intra-op
    threads: one by default (the caller decides the parallelism: a query's names may run in
    another thread beside it); an index's batches of windows take as many as torch would."""

    runtime = "onnxruntime"

    def __init__(self, weights: BertWeights, threads: int = 1) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(0, threads)  # 0: ONNX Runtime's default (the physical cores)
        options.inter_op_num_threads = 1
        # threads that wait sleep rather than spin: on a machine busy with other work a spinning
        # thread holds a core its peers need (100 passages on 2 threads under load: 12-13 s
        # spinning, 7 s not; the same vectors)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only
        self._session = onnxruntime.InferenceSession(cached_graph(weights), options,
                                                     providers=["CPUExecutionProvider"])

    def __call__(self, ids: np.ndarray, types: np.ndarray, positions: np.ndarray, bias: np.ndarray) -> np.ndarray:
        feeds = {"ids": ids.astype(np.int64, copy=False), "types": types.astype(np.int64, copy=False),
                 "positions": np.asarray(positions, dtype=np.int64), "bias": bias.astype(np.float32, copy=False)}
        return self._session.run(["hidden"], feeds)[0]


def onnx_runtime_available() -> bool:
    """True when ``onnxruntime`` and ``onnx`` are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))
