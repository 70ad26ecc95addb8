"""The extraction cache is keyed by what the extractor is (rules, models, prompts), not by a
hand-bumped name: a changed extractor extracts again, an unchanged one is the same everywhere."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

from minirag_core.extraction import chunk_reader, llm_extractor, spans, wordlists
from minirag_core.extraction.identity import cache_identity
from minirag_core.extraction.llm_extractor import LLMExtractor
from minirag_core.extraction.offline_extractor import OfflineExtractor
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


class _EchoLLM:
    name = "echo-model"

    def complete(self, prompt, *, json_mode=False):
        return ""

    async def acomplete(self, prompt, *, json_mode=False):
        return ""


def test_same_identity_in_another_process():
    here = OfflineExtractor().identity
    code = "from minirag_core.extraction.offline_extractor import OfflineExtractor; print(OfflineExtractor().identity)"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == here
    assert here == OfflineExtractor().identity and here.startswith("offline:")


def test_changed_rules_word_lists_and_models_change_the_key(monkeypatch):
    base = OfflineExtractor().identity
    with monkeypatch.context() as m:
        m.setattr(wordlists, "STOP_CAPS", wordlists.STOP_CAPS | {"Meanwhile"})
        assert OfflineExtractor().identity != base
    with monkeypatch.context() as m:
        m.setattr(chunk_reader, "LINK_WEIGHT", 3.0)
        assert OfflineExtractor().identity != base
    with monkeypatch.context() as m:
        m.setattr(spans, "_QUOTED", spans.re.compile(r"\"([^\"]{2,40})\""))
        assert OfflineExtractor().identity != base
    with monkeypatch.context() as m:
        m.setattr(importlib.metadata, "version", lambda package: "9.9.9")
        assert OfflineExtractor().identity != base  # another spaCy model version
    assert OfflineExtractor().identity == base  # everything restored
    assert OfflineExtractor(_Named("mini-a")).identity != OfflineExtractor(_Named("mini-b")).identity
    exact, fast = _Named("mini-a"), _Named("mini-a")
    exact.precision, fast.precision = "float32", "bfloat16-autocast"
    assert OfflineExtractor(exact).identity != OfflineExtractor(fast).identity  # vectors differ slightly
    assert OfflineExtractor(use_context=True).identity != base
    assert OfflineExtractor(ner=False).identity != base


def test_llm_extractor_key_follows_model_and_prompt(monkeypatch):
    base = LLMExtractor(_EchoLLM()).identity
    other = _EchoLLM()
    other.name = "other-model"
    assert LLMExtractor(other).identity != base
    assert LLMExtractor(_EchoLLM(), entity_types=["PERSON"]).identity != base
    monkeypatch.setattr(llm_extractor, "GLEAN_CONTINUE", "Look again, carefully.")
    assert LLMExtractor(_EchoLLM()).identity != base
    assert cache_identity(_Named("plain:v1")) == "plain:v1"  # an extractor without identity: its name


def test_reindex_after_a_rule_change_extracts_again(tmp_path, embedder, monkeypatch):
    calls: list[str] = []

    class Counting(OfflineExtractor):
        def extract(self, chunks, *, show_progress=False):
            calls.extend(c.id for c in chunks)
            return super().extract(chunks, show_progress=show_progress)

    doc = Document("memo", "Ada Byron met Charles Babbage in London. They wrote about the engine.", {})
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=Counting(embedder, ner=False))
    index.insert([doc])
    index.delete("memo")
    index.insert([doc])
    assert len(calls) == 1  # unchanged extractor: from the cache
    monkeypatch.setattr(wordlists, "STOP_CAPS", wordlists.STOP_CAPS | {"Babbage"})
    index.delete("memo")
    index.insert([doc])
    assert len(calls) == 2  # changed word list: extracted again
