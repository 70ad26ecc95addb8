"""The scale benchmark's replica vectors: replicas are recognised exactly, and reuse a vector
only when their original was encoded."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from benchmarks.replica_vectors import ReplicaEmbedder, replica_number, unperturb
from benchmarks.scale_corpus import perturb, replica_suffix


class HashEmbedder:
    """A unit vector per text from its CRC (no model), counting the texts it encodes."""

    name, dim = "hash", 384

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.extend(texts)
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dim) for t in texts]
        return np.asarray([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


@pytest.mark.parametrize("replica", [1, 26, 27, 52, 700])
def test_replica_number_inverts_the_suffix(replica):
    assert replica_number(replica_suffix(replica)) == replica


@pytest.mark.parametrize("text", ["Albuquerque lies in New Mexico, near the Iraqi consulate.",
                                  "The Quantum Leap aired on NBC from 1989.", "Qatar and Iraq border Saudi Arabia."])
@pytest.mark.parametrize("replica", [1, 17, 30])
def test_unperturb_recovers_the_original_and_its_replica(text, replica):
    assert unperturb(perturb(text, replica)) == (text, replica)
    assert unperturb(text) == (text, 0)


def test_replicas_reuse_their_originals_vector_turned_by_noise():
    inner = HashEmbedder()
    embedder = ReplicaEmbedder(inner)
    original = "Paris is the capital of France."
    first = embedder.embed([original])[0]
    replica_text = perturb(original, 3)
    replica, again = embedder.embed([replica_text, replica_text])
    assert inner.calls == [original]  # the replica never reached the model
    assert (embedder.reused, embedder.encoded) == (2, 1)
    assert np.allclose(replica, again)  # deterministic per text
    assert 0.6 < float(first @ replica) < 0.9  # about what a real replica's vector does
    assert abs(float(np.linalg.norm(replica)) - 1.0) < 1e-5


def test_unknown_replicas_and_plain_texts_are_encoded_for_real():
    inner = HashEmbedder()
    embedder = ReplicaEmbedder(inner)
    unseen = perturb("Berlin is in Germany.", 2)  # its original was never encoded
    out = embedder.embed([unseen, "no capitals here"])
    assert inner.calls == [unseen, "no capitals here"]
    assert np.allclose(out, inner.embed([unseen, "no capitals here"]))
    assert embedder.reused == 0


def test_reuse_off_encodes_everything():
    inner = HashEmbedder()
    embedder = ReplicaEmbedder(inner, reuse=False)
    embedder.embed(["Paris is big."])
    embedder.embed([perturb("Paris is big.", 1)])
    assert len(inner.calls) == 2 and embedder.reused == 0 and embedder.seconds > 0
