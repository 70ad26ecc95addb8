"""Mixed use: index without a model and query with one, or the reverse; answers without a model."""

from __future__ import annotations

import json

from conftest import lihuaworld_documents

from minirag_core.extraction.offline_extractor import OfflineExtractor
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.llm.callable_backend import CallableBackend
from minirag_core.llm.prompts import TUPLE_DELIMITER as D


class ScriptedModel:
    """Stands in for a small model: JSON for query mapping, records for extraction, text for answers."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if "answer_type_keywords" in prompt:
            return json.dumps({"answer_type_keywords": ["PERSON", "NOT A TYPE"], "entities_from_query": ["Wolfgang Schulz", "lunch"]})
        if "-Real Data-" in prompt:
            return (f'("entity"{D}"Wolfgang Schulz"{D}"person"{D}"Li Hua\'s friend")##'
                    f'("entity"{D}"Cozy Café"{D}"location"{D}"a café downtown")##'
                    f'("relationship"{D}"Wolfgang Schulz"{D}"Cozy Café"{D}"lunch there"{D}"lunch"{D}8)<|COMPLETE|>')
        return "They meet at the cozy café downtown."


def test_offline_index_queried_and_answered_with_a_model(tmp_path, embedder):
    lihua_docs = lihuaworld_documents(weeks=("week1",))
    offline = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    offline.insert(lihua_docs[:6])
    no_model = offline.answer("Where do Li Hua and Wolfgang Schulz have lunch?")
    assert not no_model.generated and "No language model is configured" in no_model.text
    assert no_model.result.chunks and no_model.result.chunks[0].text[:40] in no_model.text

    model = ScriptedModel()
    backend = CallableBackend("scripted", model)
    # same workdir, now with a model for query mapping and answers; extraction stays offline
    with_model = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=backend,
                              extractor=OfflineExtractor(embedder))
    reply = with_model.answer("Where do Li Hua and Wolfgang Schulz have lunch?")
    assert reply.generated and reply.text == "They meet at the cozy café downtown."
    assert reply.result.mapping.source == "model" and reply.result.mapping.answer_types == ["PERSON"]  # unknown types dropped
    assert "WOLFGANG SCHULZ" in reply.result.seeds
    answer_prompt = model.prompts[-1]
    assert all(c.text.splitlines()[0] in answer_prompt for c in reply.result.chunks)  # retrieved sessions reached it


def test_model_built_index_queried_offline(tmp_path, embedder):
    lihua_docs = lihuaworld_documents(weeks=("week1",))
    model = ScriptedModel()
    built = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=CallableBackend("scripted", model))
    built.insert(lihua_docs[:3])
    assert built.graph_store.entity("COZY CAFÉ") is not None
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)  # no model now
    result = reopened.query("Where does Wolfgang Schulz have lunch?")
    assert result.mapping.source == "offline"
    assert "WOLFGANG SCHULZ" in result.seeds and len(result.chunks) == 3
