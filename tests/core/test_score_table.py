"""``ScoreTable`` gives what the dict code it replaces gave, and the ANN path past the
in-memory threshold retrieves what the exact path does on a small corpus."""

from __future__ import annotations

import numpy as np
import pytest

from minirag_core.retrieval.topology.chunk_ranking import RankWeights, query_relevance
from minirag_core.scores import ScoreTable, top_ids


def _table(n: int, seed: int) -> ScoreTable:
    rng = np.random.default_rng(seed)
    ids = sorted(f"c{i:04d}" for i in range(n))
    values = rng.integers(0, 6, n).astype(np.float32) / 5  # many ties, as float32 similarities
    return ScoreTable(ids, values)


@pytest.mark.parametrize("n,k", [(0, 5), (1, 5), (50, 5), (200, 40), (200, 200), (200, 500)])
def test_top_matches_full_sort_with_ties_broken_by_id(n: int, k: int) -> None:
    table = _table(n, n + k)
    as_dict = dict(table.items())
    assert table.top(k) == top_ids(as_dict, k)
    assert top_ids(table, k) == [c for c, _ in sorted(as_dict.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def test_relevance_table_equals_dict_relevance() -> None:
    dense = _table(300, 7)
    lexical = {"c0003": 2.5, "c0100": 7.0, "c0299": 0.25}
    weights = RankWeights(1.0, 0.7, 0.5)
    fast = query_relevance(dense, lexical, weights)
    slow = query_relevance(dict(dense.items()), lexical, weights)
    assert isinstance(fast, ScoreTable)
    assert dict(fast.items()) == slow  # bit-identical floats
    assert top_ids(fast, 40) == top_ids(slow, 40)


def test_relevance_falls_back_to_dicts_for_an_id_the_table_lacks() -> None:
    dense = _table(10, 3)
    out = query_relevance(dense, {"elsewhere": 1.0}, RankWeights(1.0, 1.0, 0.5))
    assert not isinstance(out, ScoreTable) and out["elsewhere"] == 1.0 and len(out) == 11


def test_table_reads_like_a_dict() -> None:
    table = ScoreTable(["a", "b"], np.array([0.5, 0.25]))
    assert table["b"] == 0.25 and table.get("z", 0.0) == 0.0 and "a" in table and "z" not in table
    assert len(table) == 2 and list(table) == ["a", "b"]
    with pytest.raises(KeyError):
        table["z"]


@pytest.mark.slow
def test_ann_path_agrees_with_exact_path_when_threshold_forced_low() -> None:
    from stand_ins import HashEmbedder, NameListExtractor, NameMapper

    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document

    rng = np.random.default_rng(0)
    vocab = [f"word{i}" for i in range(300)]
    docs = [Document(f"doc-{d}", " ".join(f"Person{d * 7 + i}" for i in range(7)) + " "
                     + " ".join(rng.choice(vocab, 12, replace=False)) + ".") for d in range(80)]
    index = MiniRAGIndex(None, embedder=HashEmbedder(), extractor=NameListExtractor(), query_mapper=NameMapper())
    index.insert(docs)
    queries = ["Who met Person15 about word3 and word77?", "Person100 and Person201 word5", "word150 word9 word250"]

    def run() -> dict:  # HNSW distances differ in the last digits: scores compared rounded
        # (not light: its 10 nearest names here are mostly ties at similarity ~0, in any order)
        return {(q, m): [(c.chunk_id, round(c.score, 4)) for c in index.query(q, mode=m).chunks]
                for q in queries for m in ("mini", "naive")}

    exact = run()
    assert index.vectors.in_memory("chunks")
    index.vectors.in_memory_limit = 0  # every collection now searched in Chroma's HNSW index
    index.vectors.forget()
    assert not index.vectors.in_memory("chunks") and not index.vectors.in_memory("entities")
    approximate = run()
    assert approximate == exact
    assert all(len(ids) == 5 for ids in exact.values())


def test_a_score_table_is_a_whole_mapping() -> None:
    """Code written for the dicts a table replaced keeps working: ``values()``, ``keys()``,
    ``items()`` and ``max(table.values())`` as on a dict."""
    table = _table(20, 1)
    as_dict = dict(table.items())
    assert list(table.values()) == list(as_dict.values())
    assert list(table.keys()) == list(as_dict)
    assert max(table.values()) == max(as_dict.values())


def test_similarities_each_equal_the_matrix_product_per_vector() -> None:
    """Block-wise matrix-vector products give each vector's similarities as one product over the
    whole matrix does (bit for bit), and the matrix product's to float rounding."""
    import numpy as np

    from minirag_core.scores import SIMILARITY_BLOCK_ROWS, similarities, similarities_each

    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((2 * SIMILARITY_BLOCK_ROWS + 17, 24)).astype(np.float32)
    vectors = rng.standard_normal((3, 24)).astype(np.float32)
    each = similarities_each(matrix, vectors)
    assert each.shape == (3, len(matrix))
    for row, vector in zip(each, vectors):
        assert np.array_equal(row, similarities(matrix, vector))
    assert np.allclose(each, similarities(matrix, vectors.T).T, atol=1e-5)
    assert similarities_each(matrix, vectors[:0]).shape == (0, len(matrix))
