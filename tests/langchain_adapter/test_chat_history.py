"""``MiniRAGRetriever`` in LangChain's chat-history patterns, unchanged: ``RunnableWithMessageHistory``
and the history-aware retriever (``create_history_aware_retriever`` lives in ``langchain-classic``,
not a dependency here: its LCEL body, a ``RunnableBranch``, is built below from langchain-core);
and the session-aware retriever (``MiniRAGRetriever(session=...)``)."""

from __future__ import annotations

import pytest
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableBranch, RunnableLambda, RunnablePassthrough
from langchain_core.runnables.history import RunnableWithMessageHistory

from conversation import CHAIN, conversation_index
from langchain_minirag import MiniRAGRetriever
from minirag_core.indexing.index import MiniRAGIndex


@pytest.fixture(scope="module")
def index(embedder) -> MiniRAGIndex:
    return conversation_index(embedder)


def _history_aware(llm, retriever, prompt):
    """``create_history_aware_retriever``'s body: the input as is without history, else the
    model's standalone rewrite of it."""
    return RunnableBranch(
        (lambda x: not x.get("chat_history", False), (lambda x: x["input"]) | retriever),
        prompt | llm | StrOutputParser() | retriever,
    )


def test_history_aware_retriever_and_message_history(index: MiniRAGIndex) -> None:
    retriever = MiniRAGRetriever.from_index(index, k=2)
    # scripted model: the standalone rewrite of the follow-up, then two answers
    llm = FakeListChatModel(responses=["Maria Okafor founded it.", "Where did Maria Okafor study engineering?",
                                       "In Porto."])
    rewrite = ChatPromptTemplate.from_messages([MessagesPlaceholder("chat_history"), ("human", "{input}"),
                                                ("human", "Rewrite the last question to stand alone.")])
    answer = ChatPromptTemplate.from_messages([("system", "Context:\n{context}"), MessagesPlaceholder("chat_history"),
                                               ("human", "{input}")])
    found: list[list[str]] = []

    def context(docs) -> str:
        found.append([d.metadata["doc_id"] for d in docs])
        return "\n\n".join(d.page_content for d in docs)

    chain = (RunnablePassthrough.assign(context=_history_aware(llm, retriever, rewrite) | RunnableLambda(context))
             | answer | llm | StrOutputParser())
    histories: dict[str, InMemoryChatMessageHistory] = {}
    chat = RunnableWithMessageHistory(chain, lambda sid: histories.setdefault(sid, InMemoryChatMessageHistory()),
                                      input_messages_key="input", history_messages_key="chat_history")
    config = {"configurable": {"session_id": "s1"}}
    assert chat.invoke({"input": CHAIN[0]}, config=config) == "Maria Okafor founded it."
    assert chat.invoke({"input": CHAIN[1]}, config=config) == "In Porto."
    assert found[0][0] == "acme" and found[1][0] == "okafor"  # the rewrite retrieved the right page
    assert len(histories["s1"].messages) == 4


def test_session_retriever_continues_the_last_turn_and_sends_chunks_once(index: MiniRAGIndex) -> None:
    retriever = MiniRAGRetriever.from_index(index, k=3, session=index.session())
    first = retriever.invoke(CHAIN[0])
    follow_up = retriever.invoke(CHAIN[1])  # "she": no rewrite needed, the session carries the entity
    assert follow_up[0].metadata["doc_id"] == "okafor"
    assert "MARIA OKAFOR" in retriever.session.turns[-1].query_entities
    numbers = {d.metadata["minirag_chunk_id"]: d.metadata["minirag_passage"] for d in first}
    for doc in follow_up:
        if doc.metadata["minirag_seen_before"]:
            assert doc.page_content == f"[see passage {numbers[doc.metadata['minirag_chunk_id']]} above]"
        else:
            assert doc.page_content.startswith(f"[passage {doc.metadata['minirag_passage']}]\n")
    assert any(d.metadata["minirag_seen_before"] for d in follow_up)
    assert not any(d.metadata["minirag_seen_before"] for d in first)


async def test_session_retriever_async(index: MiniRAGIndex) -> None:
    retriever = MiniRAGRetriever.from_index(index, k=3, session=index.session())
    await retriever.ainvoke(CHAIN[0])
    follow_up = await retriever.ainvoke(CHAIN[1])
    assert follow_up[0].metadata["doc_id"] == "okafor" and len(retriever.session.turns) == 2
