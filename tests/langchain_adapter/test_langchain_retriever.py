"""MiniRAGRetriever and the LangChain adapters over a LiHuaWorld slice.

One index over 12 sessions is built once per module (embedded default: offline extractor
and all-MiniLM-L6-v2); tests that change an index use small indexes of their own with
``DeterministicFakeEmbedding``, which embed in no time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from minirag_core.embedding.base import Embedder
from minirag_core.llm.base import LLMBackend, LLMError
from pydantic import ValidationError

from langchain_minirag import ChatModelBackend, LangChainEmbedder, MiniRAGRetriever

LIHUAWORLD = Path(os.environ.get("LIHUAWORLD_DIR", Path(__file__).resolve().parents[3] / "shared/data/lihuaworld"))

LUNCH_Q = "What time is Li Hua's lunch with Wolfgang Schulz at the cozy café downtown?"
FIXTURE_Q = "Li Hua accidentally broke a light fixture once. What did Adam say about the light fixture?"
FIXTURE_SESSION = "20260108_19:00"  # the evidence session of FIXTURE_Q in qa_dev.json
FIXTURE_SENTENCE = "arrange for a professional to take a look"
MAPPING_REPLY = json.dumps({"answer_type_keywords": ["PERSON"], "entities_from_query": ["Adam Smith", "light fixture"]})
MINIRAG_KEYS = {"minirag_score", "minirag_chunk_id", "minirag_doc_id", "minirag_via", "minirag_mode", "minirag_entities",
                "minirag_paths", "minirag_key_relationships", "minirag_answer_candidates", "minirag_query_entities",
                "minirag_answer_types"}
CITATION_KEYS = {"document_id", "heading_path", "start_index", "end_index"}


def lihuaworld_sessions() -> list[Document]:
    """12 sessions of weeks 1-2; id from the file name, the session time from the first line."""
    corpus = LIHUAWORLD / "corpus"
    files = sorted((corpus / "week1").glob("*.txt"))[:9] + sorted((corpus / "week2").glob("*.txt"))[:3]
    docs = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        session = text.splitlines()[0].removeprefix("Time:").strip()
        docs.append(Document(page_content=text, id=path.stem,
                             metadata={"source": f"{path.parent.name}/{path.name}", "session": session}))
    return docs


SESSIONS = lihuaworld_sessions()
BY_ID = {d.id: d for d in SESSIONS}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp() / "langchain-lihuaworld"


@pytest.fixture(scope="module")
def retriever(workdir: Path) -> MiniRAGRetriever:
    """The module's index: 12 sessions, embedded default, persisted so other indexes can reopen it."""
    return MiniRAGRetriever.from_documents(SESSIONS, persist_directory=workdir, k=5)


def small_retriever(**kwargs: Any) -> MiniRAGRetriever:
    """An index of 4 sessions with fake (hash-seeded) embeddings: quick to build and change."""
    docs = [BY_ID[i] for i in ("20260105_1100", "20260106_1300", "20260108_1900", "20260112_1000")]
    return MiniRAGRetriever.from_documents(docs, embeddings=DeterministicFakeEmbedding(size=48), **kwargs)


class Recorder(BaseCallbackHandler):
    """Records what a retrieval reports through LangChain callbacks."""

    def __init__(self) -> None:
        self.starts: list[dict[str, Any]] = []
        self.ends: list[dict[str, Any]] = []
        self.texts: list[dict[str, Any]] = []
        self.custom: list[dict[str, Any]] = []
        self.chat_starts: list[dict[str, Any]] = []

    def on_retriever_start(self, serialized, query, *, run_id, parent_run_id=None, tags=None, metadata=None, **kw):
        self.starts.append({"query": query, "run_id": run_id, "metadata": dict(metadata or {})})

    def on_retriever_end(self, documents, *, run_id, parent_run_id=None, **kw):
        self.ends.append({"documents": list(documents), "run_id": run_id})

    def on_text(self, text, *, run_id, parent_run_id=None, **kw):
        self.texts.append({"text": text, "run_id": run_id, "minirag": kw.get("minirag")})

    def on_custom_event(self, name, data, *, run_id, tags=None, metadata=None, **kw):
        self.custom.append({"name": name, "data": data, "run_id": run_id})

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, **kw):
        self.chat_starts.append({"messages": messages, "parent_run_id": parent_run_id})


# -- documents and metadata -------------------------------------------------------------------
def test_metadata_passthrough(retriever: MiniRAGRetriever) -> None:
    docs = retriever.invoke(LUNCH_Q)
    assert len(docs) == 5
    for doc in docs:
        source = BY_ID[doc.metadata["doc_id"]]
        assert doc.page_content == source.page_content.strip()  # one chunk (token window) per session
        assert doc.metadata["source"] == source.metadata["source"]
        assert doc.metadata["session"] == source.metadata["session"]
        assert doc.page_content.startswith(f"Time: {doc.metadata['session']}")
        assert doc.metadata["minirag_doc_id"] == doc.metadata["doc_id"]
        assert doc.id == doc.metadata["minirag_chunk_id"]  # each chunk its own id
        assert set(doc.metadata) == MINIRAG_KEYS | CITATION_KEYS | {"doc_id", "source", "session"}
    assert docs[0].metadata["session"] == "20260108_11:00"  # the lunch session ranks first


@pytest.mark.parametrize("mode", ["mini", "light", "naive"])
def test_metadata_is_json_serialisable(retriever: MiniRAGRetriever, mode: str) -> None:
    docs = retriever.invoke(FIXTURE_Q, mode=mode)
    for doc in docs:
        meta = json.loads(json.dumps(doc.metadata))
        assert meta == doc.metadata
        assert meta["minirag_mode"] == mode
        assert isinstance(meta["minirag_score"], float)
        assert all(set(p) == {"query_entity", "nodes", "score"} for p in meta["minirag_paths"])
        assert all({"source", "target", "score", "description", "keywords"} == set(e)
                   for e in meta["minirag_key_relationships"])
    scores = [d.metadata["minirag_score"] for d in docs]
    vias = {d.metadata["minirag_via"] for d in docs}
    if mode == "naive":
        assert vias == {"dense"} and scores == sorted(scores, reverse=True)
    else:
        assert vias <= {"graph", "relevance", "coverage", "fill"}
        assert docs[0].metadata["minirag_query_entities"]
    if mode == "mini":
        assert any(d.metadata["minirag_paths"] for d in docs)
        # "What did Adam say ...": no question word implies an answer type, so no candidate is guessed
        assert docs[0].metadata["minirag_answer_candidates"] == []


def test_user_keys_win_over_minirag_keys() -> None:
    r = small_retriever(k=10)
    r.add_documents([Document(page_content="Time: 20260120_10:00\nLiHua: Hi Adam!\nAdamSmith: Hello Li Hua!",
                              metadata={"minirag_score": "mine", "minirag_via": "user"}, id="collide")])
    docs = r.invoke("Adam")
    mine = [d for d in docs if d.metadata["doc_id"] == "collide"]
    assert len(mine) == 1
    assert mine[0].metadata["minirag_score"] == "mine" and mine[0].metadata["minirag_via"] == "user"
    assert mine[0].metadata["minirag_chunk_id"].startswith("chunk-")


# -- exactly k ----------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["mini", "light", "naive"])
def test_exactly_k_in_every_mode(retriever: MiniRAGRetriever, mode: str) -> None:
    for k in (1, 3, 5, 12):
        docs = retriever.invoke(FIXTURE_Q, k=k, mode=mode)
        assert len(docs) == k, (mode, k)
        assert len({d.metadata["minirag_chunk_id"] for d in docs}) == k
    assert len(retriever.invoke(FIXTURE_Q, k=50, mode=mode)) == len(SESSIONS)  # all there is
    assert len(retriever.model_copy(update={"mode": mode, "k": 3}).invoke(LUNCH_Q)) == 3


def test_short_core_result_is_topped_up(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The retriever's safeguard: a core result short of k is filled with next-best dense chunks."""
    r = small_retriever(k=3)
    real_query = r.index.query

    def short_query(query: str, *, mode: str = "mini", **overrides: Any):
        result = real_query(query, mode=mode, **overrides)
        if mode != "naive":
            del result.chunks[1:]
        return result

    monkeypatch.setattr(r.index, "query", short_query)
    docs = r.invoke("What did Li Hua report to Adam?")
    assert len(docs) == 3 and len({d.id for d in docs}) == 3
    assert [d.metadata["minirag_via"] for d in docs][1:] == ["fill", "fill"]
    assert "topped up" in caplog.text
    assert r.invoke("What did Li Hua report to Adam?", mode="naive", k=4)[0].metadata["minirag_via"] == "dense"


def test_per_document_cap_reaches_the_core(monkeypatch: pytest.MonkeyPatch) -> None:
    r = small_retriever(k=3)
    seen: list[dict[str, Any]] = []
    real_query = r.index.query

    def recording_query(query: str, *, mode: str = "mini", **overrides: Any):
        seen.append(overrides)
        return real_query(query, mode=mode, **overrides)

    monkeypatch.setattr(r.index, "query", recording_query)
    r.invoke("Adam broken water tap")
    assert "max_chunks_per_document" not in seen[-1]  # the index's own setting (2 by default)
    assert r.index.settings.max_chunks_per_document == 2
    r.model_copy(update={"max_chunks_per_document": 0}).invoke("Adam broken water tap")
    assert seen[-1]["max_chunks_per_document"] == 0
    with pytest.raises(ValidationError):
        MiniRAGRetriever.from_index(r.index, max_chunks_per_document=-1)


def test_field_validation() -> None:
    r = small_retriever()
    with pytest.raises(ValidationError):
        MiniRAGRetriever.from_index(r.index, k=0)
    with pytest.raises(ValidationError):
        MiniRAGRetriever.from_index(r.index, mode="global")
    with pytest.raises(ValueError):
        r.invoke("Adam", k=0)
    with pytest.raises(ValueError):
        MiniRAGRetriever.from_texts(["a", "b"], metadatas=[{}])


def test_model_copy_and_from_index_reuse_the_index(retriever: MiniRAGRetriever) -> None:
    naive = retriever.model_copy(update={"mode": "naive", "k": 2})
    assert naive.index is retriever.index
    assert (retriever.mode, retriever.k) == ("mini", 5)
    docs = naive.invoke(LUNCH_Q)
    assert len(docs) == 2 and {d.metadata["minirag_mode"] for d in docs} == {"naive"}
    light = MiniRAGRetriever.from_index(retriever.index, mode="light", k=4)
    assert light.index is retriever.index
    assert [d.metadata["minirag_mode"] for d in light.invoke(LUNCH_Q)] == ["light"] * 4


# -- writes -----------------------------------------------------------------------------------------
def test_add_documents_and_delete_pass_through() -> None:
    r = small_retriever(k=10)
    assert sorted(r.index.document_ids()) == ["20260105_1100", "20260106_1300", "20260108_1900", "20260112_1000"]
    assert len(r.invoke("Adam broken water tap")) == 4

    assert r.delete(["20260106_1300"]) == ["20260106_1300"]
    docs = r.invoke("Adam broken water tap")
    assert len(docs) == 3 and "20260106_1300" not in {d.metadata["doc_id"] for d in docs}
    assert all("water tab in the apartment is broken" not in d.page_content for d in docs)
    assert r.delete(["no-such-doc"]) == []

    session = BY_ID["20260107_1500"]
    new = Document(page_content=session.page_content, metadata=dict(session.metadata))  # no id: hash of text
    ids = r.add_documents([new, BY_ID["20260106_1300"]])
    assert ids[0].startswith("doc-") and ids[1] == "20260106_1300"
    assert r.add_documents([new]) == ids[:1]  # unchanged: skipped by the core, same id
    docs = r.invoke("Adam broken water tap")
    assert {d.metadata["doc_id"] for d in docs} == {"20260105_1100", "20260106_1300", "20260108_1900", "20260112_1000", ids[0]}
    assert next(d for d in docs if d.metadata["doc_id"] == ids[0]).metadata["session"] == "20260107_15:00"

    assert r.add_documents([Document(page_content="Time: 20260120_09:00\nLiHua: Hello!")], ids=["explicit"]) == [
        "explicit"]
    assert r.add_documents([Document(page_content="   ")]) == []  # rejected by the core (empty)


async def test_async_paths(retriever: MiniRAGRetriever) -> None:
    docs = await retriever.ainvoke(FIXTURE_Q, k=3)
    assert [d.id for d in docs] == [d.id for d in retriever.invoke(FIXTURE_Q, k=3)]
    assert docs[0].metadata["session"] == FIXTURE_SESSION
    for mode in ("light", "naive"):
        assert len(await retriever.ainvoke(LUNCH_Q, k=4, mode=mode)) == 4

    r = small_retriever(k=10)
    assert await r.adelete("20260108_1900") == ["20260108_1900"]
    assert "20260108_1900" not in {d.metadata["doc_id"] for d in await r.ainvoke("light fixture")}
    assert await r.aadd_documents([BY_ID["20260108_1900"]]) == ["20260108_1900"]
    assert "20260108_1900" in {d.metadata["doc_id"] for d in await r.ainvoke("light fixture")}


# -- adapters -----------------------------------------------------------------------------------------
def test_chat_model_backend_unit() -> None:
    backend = ChatModelBackend(FakeListChatModel(responses=["<think>hmm</think>\n{\"ok\": 1}", "plain"]))
    assert isinstance(backend, LLMBackend)
    assert backend.name == "langchain:fake-list-chat-model"
    assert backend.complete("prompt", json_mode=True) == '{"ok": 1}'
    assert backend.complete("prompt") == "plain"
    with pytest.raises(TypeError):
        ChatModelBackend("not a model")  # type: ignore[arg-type]
    broken = ChatModelBackend(FakeListChatModel(responses=[]))
    with pytest.raises(LLMError, match="fake-list-chat-model"):
        broken.complete("prompt")


async def test_chat_model_backend_async() -> None:
    backend = ChatModelBackend(GenericFakeChatModel(messages=iter([AIMessage(content="scripted")])))
    assert backend.name == "langchain:generic-fake-chat-model"
    assert await backend.acomplete("prompt") == "scripted"


def test_chat_model_drives_query_mapping(retriever: MiniRAGRetriever, workdir: Path) -> None:
    """A chat model given as ``llm`` maps the query; its entities steer the graph retrieval."""
    chat = FakeListChatModel(responses=[MAPPING_REPLY])
    index = MiniRAGRetriever.build_index(llm=chat, persist_directory=workdir)  # reopens the module's index
    assert index.stats() == retriever.index.stats()
    r = MiniRAGRetriever.from_index(index, k=3)
    recorder = Recorder()
    docs = r.invoke(FIXTURE_Q, config={"callbacks": [recorder]})

    assert len(docs) == 3
    meta = docs[0].metadata
    # the model's entities, then the question's spans that name a graph node (Li Hua)
    assert meta["minirag_query_entities"] == ["Adam Smith", "light fixture", "Li Hua"]
    assert meta["minirag_answer_types"] == ["PERSON"]
    assert {p["query_entity"] for d in docs for p in d.metadata["minirag_paths"]} <= {"Adam Smith", "light fixture",
                                                                                     "Li Hua"}
    assert meta["session"] == FIXTURE_SESSION
    # the model saw the query_to_keyword prompt, as a child run of the retriever run
    assert len(recorder.chat_starts) == 1
    prompt = recorder.chat_starts[0]["messages"][0][0].content
    assert FIXTURE_Q in prompt
    assert recorder.chat_starts[0]["parent_run_id"] == recorder.starts[0]["run_id"]
    assert recorder.texts[0]["minirag"]["query_entities"] == ["Adam Smith", "light fixture", "Li Hua"]


async def test_chat_model_drives_query_mapping_async(workdir: Path, retriever: MiniRAGRetriever) -> None:
    chat = GenericFakeChatModel(messages=iter([AIMessage(content=MAPPING_REPLY)]))
    r = MiniRAGRetriever.from_index(MiniRAGRetriever.build_index(llm=chat, persist_directory=workdir), k=2,
                                    mode="light")
    docs = await r.ainvoke("What did Adam say when Li Hua broke the light fixture?")
    assert len(docs) == 2
    assert docs[0].metadata["minirag_query_entities"] == ["Adam Smith", "light fixture"]


def test_langchain_embedder(retriever: MiniRAGRetriever) -> None:
    fake = DeterministicFakeEmbedding(size=48)
    embedder = LangChainEmbedder(fake)
    assert isinstance(embedder, Embedder)
    assert (embedder.dim, embedder.name) == (48, "langchain:DeterministicFakeEmbedding")
    vectors = embedder.embed(["Li Hua", "Adam Smith", "Li Hua"])
    assert vectors.shape == (3, 48) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2])
    assert embedder.embed([]).shape == (0, 48)
    text = BY_ID["20260106_1300"].page_content
    assert embedder.count_tokens(text) == retriever.index.embedder.count_tokens(text)  # all-MiniLM-L6-v2 word pieces
    windows = embedder.token_windows(text, 40, 10)
    assert len(windows) > 1 and windows[0] == text[: len(windows[0])]
    assert LangChainEmbedder(fake, tokenizer="whitespace").count_tokens("a b  c\nd") == 4

    r = small_retriever(k=2)
    assert isinstance(r.index.embedder, LangChainEmbedder) and r.index.embedder.dim == 48
    for mode in ("mini", "light", "naive"):
        docs = r.invoke("What did Li Hua report to Adam?", mode=mode)
        assert len(docs) == 2 and all(d.metadata["session"].startswith("2026") for d in docs)


# -- callbacks ------------------------------------------------------------------------------------------
def test_callbacks_report_mode_and_counts(retriever: MiniRAGRetriever) -> None:
    recorder = Recorder()
    docs = retriever.invoke(FIXTURE_Q, k=4, config={"callbacks": [recorder]})
    assert len(recorder.starts) == len(recorder.ends) == 1
    start = recorder.starts[0]
    assert start["query"] == FIXTURE_Q
    assert start["metadata"]["ls_retriever_name"] == "minirag"
    assert (start["metadata"]["minirag_mode"], start["metadata"]["minirag_k"]) == ("mini", 4)
    assert len(recorder.ends[0]["documents"]) == 4 == len(docs)

    assert len(recorder.texts) == 1
    summary = recorder.texts[0]["minirag"]
    assert recorder.texts[0]["run_id"] == start["run_id"]
    assert recorder.texts[0]["text"].startswith("MiniRAG mini retrieval: 4 chunks (")
    assert summary["mode"] == "mini" and summary["chunks"] == 4
    assert sum(summary["via"].values()) == 4
    assert summary["via"] == {v: sum(d.metadata["minirag_via"] == v for d in docs) for v in summary["via"]}
    assert summary["paths"] > 0 and summary["key_relationships"] > 0
    assert recorder.custom == [{"name": "minirag_retrieval", "data": summary, "run_id": start["run_id"]}]

    recorder = Recorder()
    retriever.invoke(LUNCH_Q, mode="naive", k=2, config={"callbacks": [recorder]})
    assert recorder.starts[0]["metadata"]["minirag_mode"] == "naive"
    assert recorder.texts[0]["minirag"]["via"] == {"dense": 2}


def test_token_budget_cutting_k_is_reported(retriever: MiniRAGRetriever) -> None:
    """``token_budget`` sets the budget; when it holds fewer than ``k`` chunks the run says so."""
    tight = retriever.model_copy(update={"token_budget": 120})
    recorder = Recorder()
    docs = tight.invoke(LUNCH_Q, k=8, config={"callbacks": [recorder]})
    assert len(docs) < 8
    notes = [n for n in recorder.texts[0]["minirag"]["notes"] if n.startswith("token budget")]
    assert notes and f"{len(docs)} of the 8 chunks asked for fit in 120 tokens" in notes[0]
    assert f"note: {notes[0]}" in recorder.texts[0]["text"]
    recorder = Recorder()
    assert len(retriever.model_copy(update={"token_budget": 100_000}).invoke(
        LUNCH_Q, k=8, config={"callbacks": [recorder]})) == 8
    assert not any(n.startswith("token budget") for n in recorder.texts[0]["minirag"]["notes"])


async def test_callbacks_async_and_event_stream(retriever: MiniRAGRetriever) -> None:
    recorder = Recorder()
    docs = await retriever.ainvoke(FIXTURE_Q, k=2, config={"callbacks": [recorder]})
    assert len(docs) == 2 and len(recorder.ends[0]["documents"]) == 2
    assert recorder.texts[0]["minirag"]["chunks"] == 2
    assert recorder.custom[0]["name"] == "minirag_retrieval"

    events = [e async for e in retriever.astream_events(LUNCH_Q, version="v2")]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "on_retriever_start" and kinds[-1] == "on_retriever_end"
    custom = [e for e in events if e["event"] == "on_custom_event"]
    assert custom and custom[0]["name"] == "minirag_retrieval" and custom[0]["data"]["chunks"] == 5


# -- a full LCEL chain --------------------------------------------------------------------------------
class RecordingChatModel(FakeListChatModel):
    """A scripted chat model that keeps every prompt it is given."""

    prompts: list[str] = []

    def _call(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[override]
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, stop=stop, run_manager=run_manager, **kwargs)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata['session']}]\n{d.page_content}" for d in docs)


def test_lcel_chain(retriever: MiniRAGRetriever) -> None:
    reply = "Adam said he would arrange for a professional to look at the light fixture."
    llm = RecordingChatModel(responses=[reply], prompts=[])
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer the question using only this context:\n\n{context}"),
        ("human", "{question}"),
    ])
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()

    assert chain.invoke(FIXTURE_Q) == reply
    assert len(llm.prompts) == 1
    seen = llm.prompts[0]
    retrieved = retriever.invoke(FIXTURE_Q)
    assert len(retrieved) == 5
    for doc in retrieved:  # every retrieved session reached the prompt, verbatim
        assert doc.page_content in seen
    assert f"Time: {FIXTURE_SESSION}" in seen and FIXTURE_SENTENCE in seen  # the evidence session
    assert seen.rstrip().endswith(FIXTURE_Q)


async def test_lcel_chain_async(retriever: MiniRAGRetriever) -> None:
    llm = RecordingChatModel(responses=["ok"], prompts=[])
    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm | StrOutputParser()
    assert await chain.ainvoke(LUNCH_Q) == "ok"
    assert "Time: 20260108_11:00" in llm.prompts[0] and "cozy café downtown" in llm.prompts[0]


def test_from_documents_and_from_texts_leave_workers_to_the_index_default(monkeypatch) -> None:
    """Without ``workers`` the core index picks one per core; ``workers=N`` reaches it as given."""
    from langchain_minirag import retrievers

    seen: list[object] = []

    class Stop(Exception):
        pass

    def fake_index(persist_directory, **kwargs):
        seen.append(kwargs["workers"])
        raise Stop

    monkeypatch.setattr(retrievers, "MiniRAGIndex", fake_index)
    for build in (lambda **kw: retrievers.MiniRAGRetriever.from_documents([Document(page_content="Some text.")], **kw),
                  lambda **kw: retrievers.MiniRAGRetriever.from_texts(["Some text."], **kw)):
        with pytest.raises(Stop):
            build()
        with pytest.raises(Stop):
            build(workers=3)
    assert seen == [None, 3, None, 3]


# -- ids and counting (issue 45) ----------------------------------------------------------------------
def test_each_chunk_has_its_own_id_and_names_its_document() -> None:
    lines = [f"Speaker{i}: line {i} about the harbour lighthouse and the ferry timetable." for i in range(60)]
    page = Document(page_content="\n".join(lines), id="long-page", metadata={"source": "page.txt"})
    r = MiniRAGRetriever.from_documents([page], embeddings=DeterministicFakeEmbedding(size=48), k=4,
                                        index_kwargs={"chunk_tokens": 120, "chunk_overlap": 10},
                                        max_chunks_per_document=0)
    docs = r.invoke("harbour lighthouse ferry")
    assert len(docs) == 4
    assert len({d.id for d in docs}) == 4  # not the page's id four times
    assert all(d.id == d.metadata["minirag_chunk_id"] and d.metadata["doc_id"] == "long-page" for d in docs)


def test_counting_chunks_lists_no_chunk_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    r = small_retriever(k=10)
    store, listed = r.index.graph_store, []
    real_chunk_ids = store.chunk_ids

    def counted() -> list[str]:
        listed.append(1)
        return real_chunk_ids()

    monkeypatch.setattr(store, "chunk_ids", counted)
    assert len(r.invoke("Adam broken water tap")) == 4  # the first query may build the lexical index
    listed.clear()
    for question in ("Adam broken water tap", "light fixture", "lunch downtown"):
        assert len(r.invoke(question)) == 4
    assert not listed  # no query listed every chunk id to count them
    r.delete(["20260106_1300"])  # the count follows writes
    assert len(r.invoke("Adam broken water tap")) == 3
    r.add_documents([BY_ID["20260107_1500"], BY_ID["20260106_1300"]])
    assert len(r.invoke("Adam broken water tap")) == 5 == r.index.chunk_count()
