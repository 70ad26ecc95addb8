"""Incremental insert and delete: after any sequence the index equals a fresh build."""

from __future__ import annotations

import pytest

from index_state import _assert_same_vectors, _graph_state, _vector_state
from minirag_core.indexing.index import IndexSettingsMismatch, MiniRAGIndex


def test_inserts_and_deletes_equal_a_fresh_build(tmp_path, lihua_docs):
    # float32: under bfloat16 autocast a vector also depends (cosine >= 0.9999) on which texts
    # share its batch, and this test compares an incremental index with a fresh one to 1e-5
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(bf16=False)
    docs = lihua_docs[:12]
    index = MiniRAGIndex(tmp_path / "incremental", embedder=embedder)
    index.insert(docs[:6])
    index.insert(docs[4:10])          # overlaps: 4 and 5 are unchanged no-ops
    index.delete([docs[1].id, docs[7].id])
    index.insert(docs[10:])
    index.insert([docs[1]])           # deleted, then back
    index.delete(docs[3].id)
    remaining = [d for d in docs if d.id not in {docs[7].id, docs[3].id}]

    fresh = MiniRAGIndex(tmp_path / "fresh", embedder=embedder)
    fresh.insert(remaining)
    assert index.document_ids() == fresh.document_ids() == sorted(d.id for d in remaining)
    assert _graph_state(index) == _graph_state(fresh)
    _assert_same_vectors(_vector_state(index), _vector_state(fresh))


def test_reinsert_is_a_noop_and_changed_text_replaces(tmp_path, embedder, lihua_docs):
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    first = index.insert(lihua_docs[:3])
    assert len(first.inserted) == 3
    before = _graph_state(index)
    again = index.insert(lihua_docs[:3])
    assert again.unchanged == [d.id for d in lihua_docs[:3]] and again.chunks == 0
    assert _graph_state(index) == before
    from minirag_core.types import Document

    changed = Document(lihua_docs[0].id, lihua_docs[0].text + "\nLiHua: One more line about Zanzibar.",
                       lihua_docs[0].metadata)
    report = index.insert([changed])
    assert report.updated == [changed.id]
    assert index.graph_store.entity("ZANZIBAR") is not None


def test_index_reopens_from_disk_with_same_answers(tmp_path, embedder, lihua_docs):
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(lihua_docs[:8])
    question = "What did Wolfgang Schulz suggest?"
    before = [c.chunk_id for c in index.query(question).chunks]
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    assert reopened.stats() == index.stats()
    assert [c.chunk_id for c in reopened.query(question).chunks] == before


def test_other_settings_fail_with_a_clear_message(tmp_path, embedder):
    MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    with pytest.raises(IndexSettingsMismatch, match="chunk_tokens"):
        MiniRAGIndex(tmp_path / "wd", embedder=embedder, chunk_tokens=300)


def test_extraction_cache_means_no_second_extraction(tmp_path, embedder, lihua_docs):
    calls = []

    class CountingExtractor:
        name = "counting:v1"

        def extract(self, chunks, *, show_progress=False):
            from minirag_core.types import ExtractedEntity, ExtractionResult

            calls.extend(c.id for c in chunks)
            return [ExtractionResult(entities=[ExtractedEntity("Li Hua", "PERSON", c.text[:40])]) for c in chunks]

        async def aextract(self, chunks, *, show_progress=False):
            return self.extract(chunks)

    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=CountingExtractor())
    index.insert(lihua_docs[:2])
    index.delete([lihua_docs[0].id])
    index.insert(lihua_docs[:2])
    assert len(calls) == 2  # the re-inserted chunk came from the cache
