"""A LlamaIndex chat engine (``CondensePlusContextChatEngine``) over the MiniRAG retriever, with a
scripted model: the plain retriever with the engine's own condense step, and the session-aware one."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.chat_engine import CondensePlusContextChatEngine
from llama_index.core.llms import CustomLLM

from conversation import CHAIN, conversation_index
from llama_index_minirag import MiniRAGRetriever
from minirag_core.indexing.index import MiniRAGIndex


class ScriptedLLM(CustomLLM):
    """Replies in order; records every prompt."""

    replies: list[str] = []
    prompts: list[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=8192, num_output=256)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.replies.pop(0))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt, formatted, **kwargs)


@pytest.fixture(scope="module")
def index(embedder) -> MiniRAGIndex:
    return conversation_index(embedder)


def test_condense_plus_context_chat_engine_over_the_retriever(index: MiniRAGIndex) -> None:
    llm = ScriptedLLM(replies=["Maria Okafor founded it.", "Where did Maria Okafor study engineering?", "In Porto."],
                      prompts=[])
    engine = CondensePlusContextChatEngine.from_defaults(retriever=MiniRAGRetriever.from_index(index, top_k=2),
                                                         llm=llm)
    first = engine.chat(CHAIN[0])
    assert str(first) == "Maria Okafor founded it."
    assert first.source_nodes[0].node.metadata["minirag_doc_id"] == "acme"
    second = engine.chat(CHAIN[1])  # condensed by the model, then retrieved
    assert str(second) == "In Porto."
    assert second.source_nodes[0].node.metadata["minirag_doc_id"] == "okafor"
    assert "studied engineering in Porto" in llm.prompts[-1]  # the retrieved chunk reached the answer prompt


def test_chat_engine_over_a_session_sends_earlier_chunks_by_reference(index: MiniRAGIndex) -> None:
    llm = ScriptedLLM(replies=["Maria Okafor.", "In Porto."], prompts=[])
    retriever = MiniRAGRetriever.from_session(index.session(), top_k=3)
    engine = CondensePlusContextChatEngine.from_defaults(retriever=retriever, llm=llm, skip_condense=True)
    engine.chat(CHAIN[0])
    second = engine.chat(CHAIN[1])  # the session resolves "she"; no condense call
    texts = [n.node.get_content() for n in second.source_nodes]
    assert second.source_nodes[0].node.metadata["minirag_doc_id"] == "okafor"
    assert any(t.startswith("[see passage ") for t in texts)
    assert "Acme Robotics was founded" not in llm.prompts[-1]  # sent in the first turn, referenced now
