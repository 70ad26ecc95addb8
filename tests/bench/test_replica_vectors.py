"""The scale benchmark's replica vectors: replicas are recognised exactly, and reuse a vector
only when their original was encoded."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest

from benchmarks.scale.replica_vectors import ReplicaEmbedder, replica_offsets, strip_suffix
from benchmarks.scale.scale_corpus import perturb


class HashEmbedder:
    """A unit vector per text from its CRC (no model), counting the texts it encodes."""

    name, dim = "hash", 384

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.extend(texts)
        rows = [np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dim) for t in texts]
        return np.asarray([r / np.linalg.norm(r) for r in rows], dtype=np.float32)


@pytest.mark.parametrize("text", ["Albuquerque lies in New Mexico, near the Iraqi consulate.",
                                  "The Quantum Leap aired on NBC from 1989.", "Qatar and Iraq border Saudi Arabia."])
@pytest.mark.parametrize("replica", [1, 17, 30, 700])
def test_strip_suffix_finds_the_original_in_any_letter_case(text, replica):
    replica_text = perturb(text, replica)
    assert strip_suffix(replica_text, {text})[0] == text
    assert strip_suffix(replica_text.upper(), {text.upper()})[0] == text.upper()  # stored names
    assert strip_suffix(replica_text, {"something else"}) is None
    assert strip_suffix(text, {text}) is None  # an original is not its own replica


def test_replica_offsets_cut_the_replica_where_the_original_is_cut():
    original = "Paris is the capital of France. Its mayor sits in Paris."
    replica = perturb(original, 5)
    words = [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", original)]
    _, tail, ends = strip_suffix(replica, {original})
    moved = replica_offsets(words, tail, ends)
    assert [replica[s:e] for s, e in moved] == [perturb(original[s:e], 5) for s, e in words]


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


def test_replica_windows_are_the_originals_windows_suffixed():
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.embedding.windows import text_windows

    embedder = ReplicaEmbedder(SentenceTransformerEmbedder())
    original = " ".join(f"Sentence {i} names Paris and Berlin in France." for i in range(60))
    windows = text_windows(embedder, original)
    assert len(windows) > 1
    embedder.learning = False
    assert text_windows(embedder, perturb(original, 9)) == [perturb(w, 9) for w in windows]


def test_reuse_off_encodes_everything():
    inner = HashEmbedder()
    embedder = ReplicaEmbedder(inner, reuse=False)
    embedder.embed(["Paris is big."])
    embedder.embed([perturb("Paris is big.", 1)])
    assert len(inner.calls) == 2 and embedder.reused == 0 and embedder.seconds > 0
