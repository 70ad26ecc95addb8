"""The real model through the frameworks' own llama.cpp models: LangChain's ``ChatLlamaCpp`` as
the chat model of ``MiniRAGRetriever`` in an LCEL chain (its usage reaching LangChain callbacks),
and LlamaIndex's ``LlamaCPP`` extracting, mapping and answering in a query engine (its usage
reaching ``TokenCountingHandler``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.model.conftest import DOCUMENTS, QUESTION

pytestmark = pytest.mark.model


def test_lcel_chain_with_langchains_llamacpp_chat_model(tmp_path, gguf_path, embedder):
    from langchain_community.chat_models import ChatLlamaCpp
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.documents import Document
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    from langchain_minirag import MiniRAGRetriever
    from langchain_minirag.adapters import ChatModelBackend, llm_result_usage
    from minirag_core.extraction.llm_extractor import LLMExtractor
    from minirag_core.extraction.offline_extractor import OfflineExtractor

    class UsageSeen(BaseCallbackHandler):
        def __init__(self) -> None:
            self.calls: list[tuple] = []

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            self.calls.append(llm_result_usage(response))

    # not streamed: a streamed ChatLlamaCpp reply carries no token counts
    chat = ChatLlamaCpp(model_path=gguf_path, n_ctx=4096, max_tokens=96, temperature=0.0, seed=0, n_threads=2,
                        streaming=False, verbose=False)
    docs = [Document(page_content=d.text, metadata={"session": d.id}) for d in DOCUMENTS]
    # extraction through the chat model too, one prompt per chunk (no gleaning: CPU time)
    extractor = LLMExtractor(ChatModelBackend(chat), max_gleaning=0, fallback=OfflineExtractor(embedder))
    retriever = MiniRAGRetriever.from_documents(docs, llm=chat, embeddings=embedder, persist_directory=tmp_path,
                                                ids=[d.id for d in DOCUMENTS], k=2, workers=1,
                                                index_kwargs={"extractor": extractor})
    usage = UsageSeen()
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}\nAnswer briefly.")
    chain = ({"context": retriever | (lambda found: "\n\n".join(d.page_content for d in found)),
              "question": RunnablePassthrough()} | prompt | chat | StrOutputParser())
    reply = chain.invoke(QUESTION, config={"callbacks": [usage]})
    assert isinstance(reply, str) and reply.strip()
    # the query mapping (inside the retriever) and the answer both reached the callbacks, with
    # llama.cpp's own counts as the chat model reports them
    assert len(usage.calls) == 2 and all(p and p > 0 and c is not None for p, c in usage.calls)
    found = retriever.invoke(QUESTION)
    assert found[0].metadata["session"] == "dinner"
    assert found[0].metadata["minirag_query_entities"]  # the model's entities, or the offline ones


def test_llama_index_query_engine_with_llamacpp(gguf_path, embedder):
    from llama_index.core import Document, PropertyGraphIndex, Settings
    from llama_index.core.callbacks import CallbackManager, TokenCountingHandler
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.llms.llama_cpp import LlamaCPP

    from llama_index_minirag import MiniRAGExtractor, MiniRAGRetriever
    from llama_index_minirag.adapters import MiniLMEmbedding
    from minirag_core.llm.usage import metered

    # counts come from the replies' raw llama.cpp usage; the tokenizer is only the handler's fallback
    counter = TokenCountingHandler(tokenizer=lambda text: text.split())
    previous, Settings.callback_manager = Settings.callback_manager, CallbackManager([counter])
    try:
        llm = LlamaCPP(model_path=gguf_path, temperature=0.0, max_new_tokens=96, context_window=4096,
                       model_kwargs={"n_threads": 2, "seed": 0}, verbose=False)
        embed_model = MiniLMEmbedding(embedder)
        pg = PropertyGraphIndex.from_documents(
            [Document(text=d.text, id_=d.id) for d in DOCUMENTS], llm=llm, embed_model=embed_model,
            kg_extractors=[MiniRAGExtractor(llm=llm, embed_model=embed_model, max_gleaning=0)], show_progress=False)
        extraction_events = len(counter.llm_token_counts)
        assert extraction_events == 2  # one extraction prompt per chunk
        retriever = MiniRAGRetriever.from_property_graph(pg, llm=llm, embed_model=embed_model, mode="mini", top_k=2)
        engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
        with metered() as ours:  # the query mapping goes through the core's adapter; the answer is LlamaIndex's own
            response = engine.query(QUESTION)
    finally:
        Settings.callback_manager = previous
    assert str(response).strip()
    assert response.source_nodes and "tomato" in response.source_nodes[0].node.get_content()
    mapping, answer = counter.llm_token_counts[extraction_events:]
    assert ours.calls == 1 and ours.uncounted_calls == 0
    assert (ours.prompt_tokens, ours.completion_tokens) == (mapping.prompt_token_count, mapping.completion_token_count)
    assert answer.prompt_token_count > 0 and answer.completion_token_count > 0
