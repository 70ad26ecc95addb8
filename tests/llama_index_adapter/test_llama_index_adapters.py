"""LlamaIndex model adapters: a scripted LlamaIndex LLM driving MiniRAG extraction and query
mapping through LlamaIndexLLMBackend, LlamaIndexEmbedder and MiniLMEmbedding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from llama_index.core import Document, PropertyGraphIndex
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, EntityNode, Relation
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.schema import TextNode

from llama_index_minirag import (
    MENTIONED_IN,
    RELATED,
    LlamaIndexEmbedder,
    LlamaIndexLLMBackend,
    MiniLMEmbedding,
    MiniRAGExtractor,
    MiniRAGRetriever,
)
from minirag_core.embedding.base import Embedder
from minirag_core.llm.base import LLMBackend, LLMError
from minirag_core.llm.prompts import GLEAN_CONTINUE, GLEAN_IF_LOOP

GAME_NIGHT = ("Time: 20260105_20:00\nLiHua: Wolfgang, game night at our flat on Friday?\n"
              "WolfgangSchulz: Sure, Li Hua! I'll bring Catan.")
CHESS = "Time: 20260106_18:00\nJennifer: Li Hua, chess at the library on Sunday? MALFORMED-PLEASE"

RECORDS = (
    '("entity"<|>"Li Hua"<|>"person"<|>"Li Hua hosts game night.")##'
    '("entity"<|>"Wolfgang Schulz"<|>"person"<|>"Wolfgang is Li Hua\'s roommate.")##'
    '("relationship"<|>"Li Hua"<|>"Wolfgang Schulz"<|>"They play board games together."<|>"roommates, games"<|>8)'
    "<|COMPLETE|>"
)
GLEANED = '("entity"<|>"Catan"<|>"concept"<|>"A board game Wolfgang brings.")<|COMPLETE|>'
MALFORMED = ('Sure!\n(entity|"Jennifer"|person|"Jennifer plays chess.")\n'
             '("relationship"<|"Jennifer"<|>"Li Hua"<|"rivals"<|"chess"<|>"strong")')
MAPPING = '{"answer_type_keywords": ["person"], "entities_from_query": ["Li Hua", "game night"]}'


class ScriptedLLM(CustomLLM):
    """Answers MiniRAG's prompts by kind; records every prompt."""

    prompts: list = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-minirag")

    def _reply(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if GLEAN_IF_LOOP in prompt:
            return "NO"
        if GLEAN_CONTINUE in prompt:
            return "" if "MALFORMED-PLEASE" in prompt else GLEANED
        if "Answer type pool" in prompt or "entities_from_query" in prompt:
            return MAPPING
        return MALFORMED if "MALFORMED-PLEASE" in prompt else RECORDS

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._reply(prompt))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield CompletionResponse(text=self._reply(prompt))


class BrokenLLM(ScriptedLLM):
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise ConnectionError("model server is down")


def _kg(node: TextNode) -> tuple[dict[str, EntityNode], list[Relation]]:
    return {e.name: e for e in node.metadata[KG_NODES_KEY]}, node.metadata[KG_RELATIONS_KEY]


async def test_llm_backend_completes_and_wraps_errors():
    llm = ScriptedLLM(prompts=[])
    backend = LlamaIndexLLMBackend(llm)
    assert isinstance(backend, LLMBackend) and "scripted-minirag" in backend.name
    assert backend.complete("-Goal- text") == RECORDS
    assert await backend.acomplete("Answer type pool: ...", json_mode=True) == MAPPING
    broken = LlamaIndexLLMBackend(BrokenLLM(prompts=[]))
    with pytest.raises(LLMError, match="model server is down"):
        broken.complete("x")
    with pytest.raises(LLMError):
        await broken.acomplete("x")


def test_extractor_with_a_llama_index_llm_writes_minirag_records(embedder):
    llm = ScriptedLLM(prompts=[])
    extractor = MiniRAGExtractor(llm=llm, max_gleaning=1, num_workers=2, embed_model=embedder,
                                 entity_types=["person", "concept", "location"])
    good, bad = TextNode(text=GAME_NIGHT, id_="good"), TextNode(text=CHESS, id_="bad")
    good.metadata[KG_NODES_KEY] = [EntityNode(name="Kept", label="OTHER")]   # appended to, not replaced
    extractor([good, bad])

    extraction_prompts = [p for p in llm.prompts if GAME_NIGHT in p and GLEAN_CONTINUE not in p]
    assert extraction_prompts and "person, concept, location" in extraction_prompts[0]
    entities, relations = _kg(good)
    assert {"Kept", "Li Hua", "Wolfgang Schulz", "Catan"} <= set(entities)     # Catan from the gleaning round
    assert entities["Li Hua"].label == "PERSON" and entities["Catan"].label == "CONCEPT"
    assert entities["Li Hua"].properties == {"entity_id": "LI HUA", "entity_type": "PERSON",
                                             "description": "Li Hua hosts game night."}
    related = [r for r in relations if r.label == RELATED]
    assert len(related) == 1 and {related[0].source_id, related[0].target_id} == {"Li Hua", "Wolfgang Schulz"}
    assert related[0].properties == {"description": "They play board games together.",
                                     "keywords": "roommates, games", "weight": 8.0}
    mentions = {r.source_id: r for r in relations if r.label == MENTIONED_IN}
    assert set(mentions) == {"Li Hua", "Wolfgang Schulz", "Catan"}
    assert all(r.target_id == "good" for r in mentions.values())
    assert mentions["Catan"].properties["description"] == "A board game Wolfgang brings."

    # the malformed reply never raises: whatever could be read is kept, the lists are always set
    bad_entities, bad_relations = _kg(bad)
    assert isinstance(bad_entities, dict) and isinstance(bad_relations, list)
    assert all(r.target_id == "bad" for r in bad_relations if r.label == MENTIONED_IN)


async def test_extractor_acall_with_a_llm(embedder):
    llm = ScriptedLLM(prompts=[])
    extractor = MiniRAGExtractor(llm=llm, max_gleaning=0, embed_model=embedder)
    node = TextNode(text=GAME_NIGHT, id_="n")
    await extractor.acall([node])
    entities, relations = _kg(node)
    assert set(entities) == {"Li Hua", "Wolfgang Schulz"} and len(relations) == 3
    assert not any(GLEAN_CONTINUE in p for p in llm.prompts)


def test_llm_drives_indexing_and_query_mapping_end_to_end(embedder):
    llm = ScriptedLLM(prompts=[])
    embed_model = MiniLMEmbedding(embedder)
    docs = [Document(text=GAME_NIGHT, id_="game"), Document(text=CHESS, id_="chess")]
    index = PropertyGraphIndex.from_documents(
        docs, kg_extractors=[MiniRAGExtractor(llm=llm, embed_model=embed_model)], embed_model=embed_model,
        llm=MockLLM(), use_async=False, embed_kg_nodes=False)
    retriever = MiniRAGRetriever.from_property_graph(index, llm=llm, top_k=2)
    result = retriever.retrieve_result("Who hosts game night with Li Hua?")
    assert result.mapping.source == "model" and result.mapping.answer_types == ["PERSON"]
    assert result.mapping.entities == ["Li Hua", "game night"]
    assert result.seeds.get("LI HUA") == 1.0
    nodes = retriever.retrieve("Who hosts game night with Li Hua?")
    assert nodes[0].node.ref_doc_id == "game"
    assert nodes[0].node.metadata["minirag_answer_candidates"] == ["Wolfgang Schulz"]


def test_empty_store_retrieves_nothing(embedder):
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    from llama_index_minirag import PropertyGraphSources

    sources = PropertyGraphSources(SimplePropertyGraphStore(), embedder)
    for mode in ("mini", "light", "naive"):
        assert MiniRAGRetriever.from_property_graph(sources, mode=mode).retrieve("Who is Li Hua?") == []
    with pytest.raises(ValueError, match="unknown mode"):
        MiniRAGRetriever.from_property_graph(sources, mode="global")


def test_llama_index_embedder_normalises_and_counts_tokens():
    embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=8))
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["Li Hua", "Wolfgang Schulz"])
    assert vectors.shape == (2, 8) and embedder.dim == 8
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    assert embedder.count_tokens("Li Hua hosts game night") >= 5          # MiniLM word pieces
    assert len(embedder.token_windows("word " * 300, 100, 10)) >= 3
    by_words = LlamaIndexEmbedder(MockEmbedding(embed_dim=4), count_tokens=lambda t: len(t.split()))
    assert by_words.count_tokens("a b c") == 3
    assert by_words.token_windows("a b c d e", 3, 1) == ["a b c", "c d e"]


async def test_minilm_embedding_is_the_cores_model(embedder):
    model = MiniLMEmbedding(embedder)
    text = "Li Hua arrived in the city"
    np.testing.assert_allclose(model.get_text_embedding(text), embedder.embed([text])[0], atol=1e-6)
    np.testing.assert_allclose(model.get_query_embedding(text), embedder.embed([text])[0], atol=1e-6)
    batch = await model.aget_text_embedding_batch([text, "Wolfgang"])
    assert len(batch) == 2 and len(batch[0]) == embedder.dim
