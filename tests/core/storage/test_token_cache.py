"""Each chunk's BM25 tokens are kept in the workdir as it is indexed: a reopened index builds
BM25 from them without tokenising any text, ranks as before, and deletes drop them."""

from __future__ import annotations

from minirag_core.search import lexical
from minirag_core.indexing.index import TOKENS_FILE, MiniRAGIndex
from minirag_core.search.lexical import TOKENISER_KEY, LexicalChunkIndex, tokenize
from minirag_core.storage.token_cache import TokenCache
from minirag_core.types import Document


def test_the_cache_keeps_tokens_per_chunk_and_forgets_another_tokeniser(tmp_path) -> None:
    cache = TokenCache(tmp_path / "t.sqlite", "k1")
    many = {f"c{i}": ["tok", f"w{i}"] for i in range(25_000)}  # more ids than SQLite binds at once
    cache.put(many)
    cache.put({"empty": []})
    assert cache.get(list(many)) == many and cache.get(["empty", "nope"]) == {"empty": []}
    cache.drop(["c1", "c2"])
    assert cache.get(["c1", "c2", "c3"]) == {"c3": ["tok", "w3"]}
    cache.close()
    assert TokenCache(tmp_path / "t.sqlite", "k1").get(["c3"]) == {"c3": ["tok", "w3"]}  # reopened
    assert TokenCache(tmp_path / "t.sqlite", "k2").get(["c3"]) == {}  # other settings: emptied


def test_bm25_from_stored_tokens_asks_only_for_missing_texts(tmp_path) -> None:
    texts = {"a": "The mill at Orby burned on 3 March 1921.", "b": "Grain prices rose in Tarn.",
             "c": "Orby rebuilt its mill in 1923."}
    cache = TokenCache(tmp_path / "t.sqlite", TOKENISER_KEY)
    cache.put(dict(zip(["a", "b"], tokenize([texts["a"], texts["b"]]))))
    asked: list[list[str]] = []
    stored = LexicalChunkIndex(cache)
    stored.refresh(texts, lambda ids: asked.append(ids) or {i: texts[i] for i in ids})
    assert asked == [["c"]] and cache.get(["c"]) == {"c": tokenize([texts["c"]])[0]}  # made once, kept
    plain = LexicalChunkIndex()
    plain.build(texts)
    for query in ("When did the mill at Orby burn?", "March 3rd 1921", "Tarn grain"):
        assert stored.scores(query) == plain.scores(query)


def test_a_reopened_index_tokenises_no_chunk_text(tmp_path, embedder, monkeypatch) -> None:
    docs = [Document(id=f"d{i}", text=t) for i, t in enumerate([
        "Ada Lovelace wrote the first program for the Analytical Engine in 1843.",
        "Charles Babbage designed the Analytical Engine in London.",
        "The Difference Engine was built later from Babbage's plans."])]
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(docs)
    chunk_ids = sorted(index.graph_store.chunk_ids())
    assert set(index.token_cache.get(chunk_ids)) == set(chunk_ids) and (tmp_path / "wd" / TOKENS_FILE).exists()
    before = index.query("Who designed the Analytical Engine?", mode="mini").to_json()
    made: list[int] = []
    real = lexical.tokenize
    monkeypatch.setattr(lexical, "tokenize", lambda texts: made.append(len(texts)) or real(texts))
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    assert reopened.query("Who designed the Analytical Engine?", mode="mini").to_json() == before
    assert made and all(n == 1 for n in made)  # the query alone was tokenised
    reopened.delete(["d1"])  # its chunk's tokens go with it
    assert set(reopened.token_cache.get(chunk_ids)) == set(reopened.graph_store.chunk_ids())
    assert len(reopened.graph_store.chunk_ids()) == len(chunk_ids) - 1
