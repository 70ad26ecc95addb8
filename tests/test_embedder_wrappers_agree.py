"""The LlamaIndex and LangChain embedder wrappers cut a text into the same token windows (and so
give the same vectors) as each other and as the core embedder, whatever its punctuation and
spacing: windows are slices of the text, never words rejoined with single spaces."""

from __future__ import annotations

from typing import List

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from llama_index.core.base.embeddings.base import BaseEmbedding

from langchain_minirag import LangChainEmbedder
from llama_index_minirag import LlamaIndexEmbedder
from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
from minirag_core.embedding.windows import embed_long, text_windows

TEXT = ("The  pump failed twice;   the crew, tired, restarted it at 04:10.\n\n"
        "Why? Nobody knew -- the logs (all  three of them) said nothing!  "
        "Later, an engineer found a loose valve... and   fixed it.  " * 6)


def _character_vector(text: str) -> list[float]:
    """A vector that changes with every character, spaces included."""
    counts = np.zeros(64, dtype=np.float64)
    for position, char in enumerate(text):
        counts[(ord(char) * 7 + position) % 64] += 1.0
    return (counts + 1.0).tolist()


class CharacterEmbeddings(Embeddings):
    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        return [_character_vector(t) for t in texts]

    def embed_query(self, text: str) -> List[float]:
        return _character_vector(text)


class CharacterEmbedding(BaseEmbedding):
    model_name: str = "character"

    def _get_query_embedding(self, query: str) -> List[float]:
        return _character_vector(query)

    async def _aget_query_embedding(self, query: str) -> List[float]:
        return _character_vector(query)

    def _get_text_embedding(self, text: str) -> List[float]:
        return _character_vector(text)


def _wrappers(tokenizer: str, max_tokens: int) -> tuple[LlamaIndexEmbedder, LangChainEmbedder]:
    count = (lambda t: len(t.split())) if tokenizer == "whitespace" else None
    llama = LlamaIndexEmbedder(CharacterEmbedding(), count_tokens=count, max_tokens=max_tokens)
    lang = LangChainEmbedder(CharacterEmbeddings(), tokenizer=tokenizer, max_tokens=max_tokens)
    return llama, lang


@pytest.mark.parametrize("tokenizer", ["minilm", "whitespace"])
def test_wrappers_give_the_same_windows_and_vectors(tokenizer: str) -> None:
    llama, lang = _wrappers(tokenizer, max_tokens=40)
    assert llama.count_tokens(TEXT) > 100
    windows = llama.token_windows(TEXT, 30, 8)
    assert len(windows) > 3 and windows == lang.token_windows(TEXT, 30, 8)
    assert all(w in TEXT for w in windows)  # slices: punctuation and runs of spaces kept
    long_windows = text_windows(llama, TEXT)
    assert len(long_windows) > 3 and long_windows == text_windows(lang, TEXT)
    assert all(w in TEXT for w in long_windows)
    np.testing.assert_allclose(embed_long(llama, [TEXT, "short"]), embed_long(lang, [TEXT, "short"]), atol=1e-6)


def test_wrappers_cut_long_texts_as_the_core_embedder_does() -> None:
    """Word-piece windows at sentence ends, as the core's own embedder's."""
    core = SentenceTransformerEmbedder()
    core.max_tokens = 40
    llama, lang = _wrappers("minilm", max_tokens=40)
    expected = text_windows(core, TEXT)
    assert text_windows(llama, TEXT) == expected == text_windows(lang, TEXT)
    assert llama.count_tokens(TEXT) == core.count_tokens(TEXT) == lang.count_tokens(TEXT)
