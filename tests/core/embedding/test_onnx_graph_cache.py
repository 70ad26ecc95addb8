"""The question encoder's ONNX graph is built once per checkpoint and kept in the cache folder:
a later process loads it instead of building it again (half a second of a one-shot query)."""

from __future__ import annotations

import numpy as np
import pytest

from minirag_core.embedding import onnx_bert
from minirag_core.embedding.bert_weights import BertWeights


@pytest.fixture(scope="module")
def weights(embedder):
    return BertWeights.load(embedder.model_path)


def _forward_of(w: BertWeights) -> np.ndarray:
    forward = onnx_bert.OnnxBertForward(w)
    ids = np.array([[101, 2073, 2003, 6265, 102]], dtype=np.int64)
    return forward(ids, np.zeros_like(ids), np.arange(ids.shape[1]), np.zeros((1, 1, 1, ids.shape[1]), np.float32))


def test_a_built_graph_is_reused_and_gives_the_same_states(weights, tmp_path, monkeypatch):
    monkeypatch.setenv("MINIRAG_CACHE_DIR", str(tmp_path))
    first = _forward_of(weights)
    [kept] = tmp_path.glob("bert-*.onnx")
    monkeypatch.setattr(onnx_bert, "bert_graph", lambda w: pytest.fail("the graph was built again"))
    np.testing.assert_array_equal(_forward_of(weights), first)
    assert list(tmp_path.glob("bert-*.onnx")) == [kept] and not list(tmp_path.glob(".tmp-*"))


def test_another_checkpoint_gets_its_own_graph(weights):
    changed = BertWeights({**weights.tensors, "embeddings.LayerNorm.bias": weights["embeddings.LayerNorm.bias"] + 1},
                          weights.heads, weights.layers, weights.eps, weights.pad_id)
    assert onnx_bert.graph_key(changed) != onnx_bert.graph_key(weights)


def test_an_unwritable_cache_builds_in_memory(weights, tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("MINIRAG_CACHE_DIR", str(blocked / "cache"))
    assert isinstance(onnx_bert.cached_graph(weights), bytes)
