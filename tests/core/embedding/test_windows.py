"""Embedding windows: texts longer than the model reads are embedded whole."""

from __future__ import annotations

import numpy as np
import pytest

from minirag_core.embedding.windows import (SPECIAL_TOKENS, combine_windows, embed_long, embed_windows,
                                            sentence_windows, text_windows)

SENTENCES = [f"Sentence number {i} mentions the {w} that the committee reviewed on day {i}."
             for i, w in enumerate(["budget", "harbour", "orchard", "library", "bridge", "archive"] * 12)]
LONG = " ".join(SENTENCES)


def _spans(text: str, windows: list[str]) -> list[tuple[int, int]]:
    spans, cursor = [], 0
    for window in windows:
        start = text.find(window, max(0, cursor - len(window)))
        assert start != -1, "a window is not a slice of the text"
        spans.append((start, start + len(window)))
        cursor = start + 1
    return spans


def test_a_long_text_gets_windows_that_fit_the_model_and_cover_it(embedder) -> None:
    size = embedder.max_tokens - SPECIAL_TOKENS
    assert embedder.count_tokens(LONG) > 3 * size
    windows = text_windows(embedder, LONG)
    assert len(windows) >= 4
    assert all(0 < embedder.count_tokens(w) <= size for w in windows)
    spans = _spans(LONG, windows)
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)
    covered = np.zeros(len(LONG), dtype=bool)
    for start, end in spans:
        covered[start:end] = True
    assert all(LONG[i].isspace() for i in np.flatnonzero(~covered))   # every word is in some window
    overlaps = [a_end - b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:])]
    assert all(o > 0 for o in overlaps)                                 # consecutive windows overlap a little
    assert all(embedder.count_tokens(LONG[b:a]) <= 32 for (_, a), (b, _) in zip(spans, spans[1:]))
    assert all(w.endswith(".") for w in windows)                        # cut at sentence ends
    assert all(w.startswith("Sentence number") for w in windows)


def test_a_short_text_is_one_window(embedder) -> None:
    assert text_windows(embedder, SENTENCES[0]) == [SENTENCES[0]]
    assert text_windows(embedder, "x" * 3) == ["xxx"]


def test_windows_without_sentences_cut_between_words() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    offsets, pos = [], 0
    for word in text.split(" "):
        offsets.append((pos, pos + len(word)))
        pos += len(word) + 1
    windows = sentence_windows(text, offsets, 30, 5)
    assert all(len(w.split()) <= 30 for w in windows)
    assert windows[0].split()[0] == "w0" and windows[-1].split()[-1] == "w99"
    words = [w for window in windows for w in window.split()]
    assert set(words) == set(text.split()) and len(words) > 100          # all words, some twice (overlap)
    with pytest.raises(ValueError):
        sentence_windows(text, offsets, 5, 5)


def test_one_vector_per_text_is_the_direction_of_its_windows_mean() -> None:
    vectors = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    combined = combine_windows(vectors, np.array([0, 0, 1]), 2)
    assert np.allclose(combined[0], [2 ** -0.5, 2 ** -0.5, 0]) and np.allclose(combined[1], [0, 0, 1])


def test_windowed_vectors_of_a_short_text_are_its_plain_vector(embedder) -> None:
    texts = [SENTENCES[1], LONG]
    vectors, owners = embed_windows(embedder, texts)
    assert owners.tolist()[0] == 0 and owners.tolist().count(1) == len(text_windows(embedder, LONG))
    plain = embedder.embed([SENTENCES[1]])[0]
    assert np.allclose(embed_long(embedder, texts)[0], plain, atol=1e-5)
    assert not np.allclose(embed_long(embedder, [LONG])[0], embedder.embed([LONG])[0], atol=1e-3)


class _Store:
    """A dict-backed ``VectorStore`` (exact, in memory)."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, np.ndarray]] = {}
        self.texts: dict[str, dict[str, str]] = {}

    def upsert(self, collection, ids, embeddings, documents, metadatas) -> None:
        self.data.setdefault(collection, {}).update(zip(ids, np.asarray(embeddings, dtype=np.float32)))
        self.texts.setdefault(collection, {}).update(zip(ids, documents))

    def delete(self, collection, ids) -> None:
        for i in ids:
            self.data.get(collection, {}).pop(i, None)
            self.texts.get(collection, {}).pop(i, None)

    def ids(self, collection):
        return set(self.data.get(collection, {}))

    def get_embeddings(self, collection, ids):
        return {i: self.data[collection][i] for i in ids if i in self.data.get(collection, {})}

    def get_documents(self, collection, ids):
        return {i: self.texts[collection][i] for i in ids if i in self.texts.get(collection, {})}

    def count(self, collection) -> int:
        return len(self.data.get(collection, {}))

    def query(self, collection, embedding, k, where=None):
        raise NotImplementedError


def test_a_chunk_scores_its_best_window_and_its_windows_go_with_it(embedder) -> None:
    from minirag_core.search.vectors import CHUNKS, WINDOWS, VectorIndex, window_owner

    store = _Store()
    index = VectorIndex(store, embedder)
    index.upsert(CHUNKS, ["long", "short"], [LONG, SENTENCES[0]], [{}, {}])
    windows = text_windows(embedder, LONG)
    assert store.count(CHUNKS) == 2 and store.count(WINDOWS) == len(windows) - 1
    assert {window_owner(w) for w in store.ids(WINDOWS)} == {"long"}
    vectors = embedder.embed(windows)
    query = vectors[-1]                                        # the last window's own vector
    scores = index.chunk_similarities(query)
    assert scores["long"] == pytest.approx(1.0, abs=1e-4)      # max over windows, not the first
    assert scores["long"] > float(vectors[0] @ query) + 0.05
    index.delete(CHUNKS, ["long"])
    assert store.count(WINDOWS) == 0 and set(index.chunk_similarities(query)) == {"short"}


def test_a_chunk_whose_vector_text_is_unchanged_is_not_embedded_again(embedder) -> None:
    """An alias move re-links a chunk's entities; where its text and entity descriptions stay the
    same, its stored vector is kept; where a description changed, it is embedded again."""
    import networkx as nx

    from minirag_core.search.graph_vectors import sync_vectors
    from minirag_core.search.vectors import CHUNKS, VectorIndex

    class Counting:
        def __init__(self) -> None:
            self.texts: list[str] = []

        def __getattr__(self, name):
            return getattr(embedder, name)

        def embed(self, texts):
            self.texts.extend(texts)
            return embedder.embed(texts)

    g = nx.Graph()
    g.add_node("c1", kind="chunk", doc_id="d1", text=SENTENCES[0])
    g.add_node("ada kell", kind="entity", name="Ada Kell", type="PERSON")
    g.add_edge("c1", "ada kell", description="Ada Kell wrote the report.")
    counting, store = Counting(), _Store()
    index = VectorIndex(store, counting)
    sync_vectors(g, index, [], [], ["c1"], index_relations=False)
    assert len(counting.texts) == 1 and store.count(CHUNKS) == 1
    g.remove_node("ada kell")                      # re-homed: same description, another entity node
    g.add_node("a kell", kind="entity", name="A. Kell", type="PERSON")
    g.add_edge("c1", "a kell", description="Ada Kell wrote the report.")
    sync_vectors(g, index, [], [], ["c1"], index_relations=False)
    assert len(counting.texts) == 1, "an unchanged chunk text was embedded again"
    g.edges["c1", "a kell"]["description"] = "Kell wrote the report in May."
    sync_vectors(g, index, [], [], ["c1"], index_relations=False)
    assert len(counting.texts) == 2 and "in May" in store.texts[CHUNKS]["c1"]


def test_relation_vectors_are_deleted_only_where_one_was_stored(embedder) -> None:
    import networkx as nx

    from minirag_core.search.graph_vectors import sync_vectors
    from minirag_core.search.vectors import GENERIC_RELATION_KEYWORDS, RELATIONS, VectorIndex, relation_vector_id

    generic = sorted(GENERIC_RELATION_KEYWORDS)[0]
    store = _Store()
    deleted: list[list[str]] = []
    delete = store.delete
    store.delete = lambda collection, ids: (deleted.append(list(ids)) if collection == RELATIONS else None,
                                            delete(collection, ids))
    index = VectorIndex(store, embedder)
    g = nx.Graph()
    for node, name in (("a", "Ada"), ("b", "Bo"), ("c", "Cy")):
        g.add_node(node, kind="entity", name=name, type="PERSON")
    g.add_edge("a", "b", keywords="mentor", description="Ada taught Bo.")
    g.add_edge("a", "c", keywords=generic, description="")
    sync_vectors(g, index, [], [("a", "b"), ("a", "c")], [], index_relations=True)
    assert store.ids(RELATIONS) == {relation_vector_id("a", "b")}
    assert deleted == [], "a co-occurrence edge that never had a vector was looked up to delete"
    g.edges["a", "b"]["keywords"] = generic          # no meaning any more: its stored vector goes
    g.remove_edge("a", "c")                            # gone: deleted whatever it had
    sync_vectors(g, index, [], [("a", "b"), ("a", "c")], [], index_relations=True)
    assert store.ids(RELATIONS) == set()
    assert sorted(deleted[-1]) == sorted([relation_vector_id("a", "b"), relation_vector_id("a", "c")])


GARDEN = ("The community garden volunteers planted tomatoes, beans and squash along the eastern beds, "
          "then mulched the paths with straw so the soil would keep its moisture through the dry weeks.")
LAST = ("In March the lighthouse keeper Marta Olsen repaired the brass telescope on the north pier. "
        "She replaced its cracked lens and polished the brass tube. "
        "The repaired telescope on the north pier now shows ships far out at sea.")


def test_an_answer_past_the_first_window_of_a_long_chunk_is_found(embedder, tmp_path) -> None:
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document

    sides = ("eastern", "western", "northern", "southern", "upper", "lower", "inner", "outer")
    long_text = " ".join([GARDEN.replace("eastern", side) for side in sides] + [LAST])
    assert embedder.count_tokens(long_text.split(LAST)[0]) > embedder.max_tokens    # the model stops before it
    distractors = ["The astronomy club bought a new telescope for the school observatory last winter.",
                   "Fishermen tie their boats to the north pier when the harbour is full.",
                   "A keeper at the city zoo repaired the fence of the penguin enclosure."]
    question = "Who repaired the brass telescope on the north pier?"
    q = embedder.embed([question])[0]
    truncated = float(embedder.embed([long_text])[0] @ q)
    assert truncated < max(float(v @ q) for v in embedder.embed(distractors))   # truncation misses it
    index = MiniRAGIndex(tmp_path / "w", embedder=embedder)
    index.insert([Document(id="garden", text=long_text)] +
                 [Document(id=f"d{i}", text=t) for i, t in enumerate(distractors)])
    assert index.stats()["chunks"] == 4
    assert index.query(question, mode="naive", top_k=1).chunks[0].doc_id == "garden"
    assert index.query(question, mode="mini", top_k=1).chunks[0].doc_id == "garden"


def test_bf16_torch_batches_match_float32_vectors(monkeypatch) -> None:
    """bfloat16 autocast (the default on CPUs with AMX) keeps every vector within cosine
    0.999 of the float32 one, on long windows and short names alike, and stays unit length."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    texts = [("The committee met in Lagos on Tuesday. " * 30)[:1200], "Amara Okafor", "a short phrase"] * 3
    exact = SentenceTransformerEmbedder(bf16=False)._encode_torch(texts)
    fast = SentenceTransformerEmbedder(bf16=True)._encode_torch(texts)
    assert exact.shape == fast.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert float((exact * fast).sum(axis=1).min()) > 0.999
    monkeypatch.setenv("MINIRAG_EMBED_BF16", "0")
    assert SentenceTransformerEmbedder().precision == "float32"
    monkeypatch.setenv("MINIRAG_EMBED_BF16", "1")
    assert SentenceTransformerEmbedder().precision == "bfloat16-autocast"


def test_queries_run_on_torch_in_float32_once_it_is_loaded_on_the_numpy_fallback(monkeypatch) -> None:
    """Before torch is loaded a query and its entities go through the NumPy pass; after
    ``load_torch`` they run on torch, in float32 even where bfloat16 autocast is on, with the
    same vectors; batches beyond query size keep the autocast setting."""
    from minirag_core.embedding import bert_encoder
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    monkeypatch.setenv("MINIRAG_BERT_RUNTIME", "numpy")
    texts = ["Who repaired the brass telescope on the north pier?", "Marta Olsen", "north pier"]
    embedder = SentenceTransformerEmbedder(bf16=True)
    on_numpy = embedder._encode(texts)
    assert embedder._bert.forward.runtime == "numpy" and not embedder._torch_loaded
    embedder.load_torch()
    monkeypatch.setattr(bert_encoder.BertEncoder, "encode", lambda *a, **k: pytest.fail("NumPy pass used"))
    seen = []
    original = embedder._encode_torch
    monkeypatch.setattr(embedder, "_encode_torch", lambda batch, bf16=None: seen.append(bf16) or original(batch, bf16))
    on_torch = embedder._encode(texts)
    assert seen == [False] and np.abs(on_torch - on_numpy).max() < 1e-5
    embedder._encode(texts * 3)  # beyond a query's size: bfloat16 autocast as configured
    assert seen == [False, True]


def test_short_texts_stay_on_onnx_runtime_once_torch_is_loaded(monkeypatch) -> None:
    """On ONNX Runtime (faster than torch for short texts) a query and its entities, and an
    index batch of names of any size, stay on the small-batch encoder after ``load_torch``;
    with ``onnx_batches=False`` long texts go to torch, and so do batches beyond a query's size
    where bfloat16 is on."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    monkeypatch.delenv("MINIRAG_BERT_RUNTIME", raising=False)
    texts = ["Who repaired the brass telescope on the north pier?", "Marta Olsen", "north pier"]
    embedder = SentenceTransformerEmbedder(bf16=False, onnx_batches=False)
    before = embedder._encode(texts)
    assert embedder._bert.forward.runtime == "onnxruntime"
    embedder.load_torch()
    seen = []
    original = embedder._encode_torch
    monkeypatch.setattr(embedder, "_encode_torch", lambda batch, bf16=None: seen.append(len(batch)) or original(batch, bf16))
    after = embedder._encode(texts)
    assert seen == [] and np.abs(after - before).max() < 1e-6
    names = embedder._encode([f"{t} {i}" for i in range(200) for t in texts[1:]])  # 400 names: one index batch
    assert seen == [] and names.shape == (400, embedder.dim)
    long = embedder._encode([texts[0] * 12, texts[1]])
    assert seen == [2] and np.abs(long[1] - before[1]).max() < 1e-5
    embedder.bf16 = True
    embedder._encode(texts * 3)
    assert seen == [2, 9]


def test_index_batches_of_long_windows_run_on_onnx_runtime_with_torchs_vectors(monkeypatch) -> None:
    """By default (ONNX Runtime installed, no bfloat16) long windows run on ONNX Runtime, on as
    many threads as torch is set to, never on torch, with vectors within cosine 0.999999 of
    sentence-transformers' on torch; ``onnx_batches=False`` or bfloat16 keeps them on torch."""
    import torch

    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder, batch_threads

    monkeypatch.delenv("MINIRAG_BERT_RUNTIME", raising=False)
    windows = [("The committee met in Lagos on Tuesday to plan the harbour works. " * 20)[:n]
               for n in (600, 900, 1200)] + ["Marta Olsen", "a short phrase " * 40]
    embedder = SentenceTransformerEmbedder(bf16=False)
    embedder.load_torch()
    reference = SentenceTransformerEmbedder(bf16=False, onnx_batches=False)._encode_torch(windows)
    monkeypatch.setattr(embedder, "_encode_torch", lambda *a, **k: pytest.fail("torch used for an index batch"))
    fast = embedder._encode(windows)
    assert fast.shape == reference.shape
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert float((fast * reference).sum(axis=1).min()) > 0.999999
    assert batch_threads() == torch.get_num_threads()
    seen = []
    monkeypatch.setattr(embedder, "_encode_torch", lambda batch, bf16=None: seen.append(len(batch)) or reference)
    embedder.onnx_batches = False
    embedder._encode(windows)
    embedder.onnx_batches, embedder.bf16 = True, True
    embedder._encode(windows)
    assert seen == [len(windows), len(windows)]


def test_a_thread_may_cap_the_threads_of_its_index_batches(monkeypatch) -> None:
    import sys
    import threading
    import types

    from minirag_core.embedding import sentence_transformer as st

    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(get_num_threads=lambda: 4))
    seen: dict[str, int] = {}
    with st.batch_threads_at_most(1):
        with st.batch_threads_at_most(8):
            seen["inner, above torch's"] = st.batch_threads()
        seen["capped"] = st.batch_threads()
        other = threading.Thread(target=lambda: seen.setdefault("another thread", st.batch_threads()))
        other.start(), other.join()
    seen["after"] = st.batch_threads()
    assert seen == {"inner, above torch's": 4, "capped": 1, "another thread": 4, "after": 4}


def test_batched_entity_lookup_past_the_ann_threshold_equals_one_lookup_per_vector(embedder) -> None:
    from minirag_core.storage.chroma_store import ChromaVectorStore
    from minirag_core.search.vectors import ENTITIES, VectorIndex

    names = ["Marta Olsen", "north pier", "brass telescope", "community garden", "Lunar New Year", "Wi-Fi"]
    index = VectorIndex(ChromaVectorStore(None), embedder, entity_limit=2)  # 6 entities: in the ANN index
    index.upsert(ENTITIES, [n.lower() for n in names], names, [{"name": n} for n in names])
    assert not index.in_memory(ENTITIES)
    queries = embedder.embed(["the lighthouse keeper", "a telescope", "garden volunteers"])
    batched = index.nearest_many(ENTITIES, queries, 3)
    assert batched == [index.nearest(ENTITIES, q, 3) for q in queries]
    assert batched[1][0][0] == "brass telescope" and all(len(found) == 3 for found in batched)
