"""An index with more entities than SQLite's bound-variable limit (32,766) answers in every mode."""

from __future__ import annotations


import pytest

from minirag_core.indexing.index import MiniRAGIndex
from stand_ins import HashEmbedder, NameListExtractor, NameMapper

pytestmark = pytest.mark.slow

N_DOCS = 420
NAMES_PER_DOC = 100  # 42,000 distinct entities


def _documents():
    from minirag_core.types import Document

    docs = []
    for d in range(N_DOCS):
        names = [f"Person{d * NAMES_PER_DOC + i}" for i in range(NAMES_PER_DOC)]
        docs.append(Document(f"doc-{d}", f"Team {d} roster: " + " and ".join(names) + "."))
    return docs


@pytest.mark.parametrize("backend", ["networkx", "sqlite"])
def test_index_with_over_40000_entities_answers_in_every_mode(tmp_path, backend):
    index = MiniRAGIndex(tmp_path / "wd", embedder=HashEmbedder(), extractor=NameListExtractor(),
                         query_mapper=NameMapper(), graph_backend=backend)
    index.insert(_documents())
    assert index.stats()["entities"] == N_DOCS * NAMES_PER_DOC > 40_000
    question = "Who works with Person12345?"
    for mode in ("mini", "light", "naive"):
        result = index.query(question, mode=mode)
        assert result.chunks, mode
        if mode != "naive":  # the graph modes reach the one document that names the person
            assert result.chunks[0].doc_id == "doc-123", mode
    # a new process reads the same store (the embeddings come back in slices too)
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=HashEmbedder(), extractor=NameListExtractor(),
                            query_mapper=NameMapper())
    assert reopened.query(question, mode="mini").chunks[0].doc_id == "doc-123"
