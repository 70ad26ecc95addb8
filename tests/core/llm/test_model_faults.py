"""Model faults during indexing, against a local server speaking Ollama's /api/chat.

Unreachable host, timeouts, HTTP 500 and a missing model give bounded retries and a clear
``LLMError``; a run that fails halfway keeps its finished batches, and re-running resumes
without asking the model again for chunks it already answered.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import Counter

import networkx as nx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

import minirag_core.indexing.index as index_module
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.llm.base import LLMError
from minirag_core.llm.ollama_backend import OllamaBackend
from minirag_core.llm.prompts import GLEAN_CONTINUE

from conftest import lihuaworld_documents

MODEL = "tiny-test-model:0.5b"
CHUNKING = {"chunk_tokens": 120, "chunk_overlap": 10}
_NAME = re.compile(r"\b[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?\b")


def _chat(content: str) -> Response:
    body = {"model": MODEL, "created_at": "2026-11-02T10:00:00Z", "done": True, "done_reason": "stop",
            "message": {"role": "assistant", "content": content}}
    return Response(json.dumps(body), content_type="application/json")


def _records_for(prompt: str) -> str:
    """A well-formed MiniRAG extraction reply naming the capitalised words of the chunk."""
    text = prompt.split("-Real Data-", 1)[1].split("Text:\n", 1)[1].rsplit("\n######################\nOutput:", 1)[0]
    names = list(dict.fromkeys(m.group(0) for m in _NAME.finditer(text) if m.group(0) not in {"Time", "The"}))[:4]
    records = [f'("entity"<|>"{n}"<|>"person"<|>"{n} appears in the chat.")' for n in names]
    if len(names) >= 2:
        records.append(f'("relationship"<|>"{names[0]}"<|>"{names[1]}"<|>"{names[0]} chats with {names[1]}."'
                       f'<|>"chat, friends"<|>7)')
    records.append('("content_keywords"<|>"chat, daily life")')
    return "##\n".join(records) + "<|COMPLETE|>"


class FakeOllama:
    """Answers /api/chat like Ollama; ``fail_after`` successful extraction replies, then HTTP 500
    forever (``mode="500"``), or always 404 for a missing model (``mode="404"``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.mode = "ok"
        self.fail_after: int | None = None
        self.requests: list[str] = []        # every prompt received, in order
        self.answered: Counter[str] = Counter()  # prompts answered with HTTP 200
        self.extraction_ok = 0

    def handler(self, request: Request) -> Response:
        body = json.loads(request.data)
        prompt = body["messages"][-1]["content"]
        with self.lock:
            self.requests.append(prompt)
            if self.mode == "404":
                return Response(json.dumps({"error": f"model '{body['model']}' not found, try pulling it first"}),
                                status=404, content_type="application/json")
            failing = self.mode == "500" or (self.fail_after is not None and self.extraction_ok >= self.fail_after)
            if failing:
                return Response(json.dumps({"error": "llama runner process has terminated"}), status=500,
                                content_type="application/json")
            self.answered[prompt] += 1
            if body.get("format") == "json":
                words = _NAME.findall(prompt.rsplit("Query:", 1)[-1])[:2] or ["Li Hua"]
                return _chat(json.dumps({"answer_type_keywords": ["PERSON"], "entities_from_query": words}))
            if prompt.endswith(GLEAN_CONTINUE):
                return _chat("<|COMPLETE|>")
            self.extraction_ok += 1
            return _chat(_records_for(prompt))

    @staticmethod
    def extraction_prompts(prompts) -> set[str]:
        """First-pass extraction prompts (one per chunk), not gleaning or query prompts."""
        return {p for p in prompts if "-Real Data-" in p and not p.endswith(GLEAN_CONTINUE)}


@pytest.fixture
def fake(httpserver: HTTPServer) -> FakeOllama:
    server = FakeOllama()
    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(server.handler)
    return server


def _backend(host: str, **kw) -> OllamaBackend:
    kw.setdefault("timeout", 10.0)
    return OllamaBackend(MODEL, host=host, max_retries=2, backoff_base=0.01, backoff_max=0.02, **kw)


def _host(httpserver: HTTPServer) -> str:
    return httpserver.url_for("/").rstrip("/")


def _graph_state(index: MiniRAGIndex) -> dict:
    data = nx.node_link_data(index.graph_store.graph, edges="edges")
    data["nodes"] = sorted(data["nodes"], key=lambda n: n["id"])
    for edge in data["edges"]:
        edge["source"], edge["target"] = sorted((edge["source"], edge["target"]))
    data["edges"] = sorted(data["edges"], key=lambda e: (e["source"], e["target"]))
    return data


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_host_is_a_clear_error_and_the_workdir_stays_usable(tmp_path, embedder):
    host = f"http://127.0.0.1:{_closed_port()}"
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=_backend(host))
    with pytest.raises(LLMError) as info:
        index.insert(lihuaworld_documents(limit=1))
    message = str(info.value)
    assert host in message and MODEL in message and "after 3 attempt(s)" in message
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    assert reopened.document_ids() == [] and reopened.stats()["chunks"] == 0


def test_http_500_is_retried_then_succeeds(tmp_path, embedder, httpserver, fake):
    failures = {"left": 2}
    real = fake.handler

    def flaky(request: Request) -> Response:  # the first two requests fail, then healthy
        with fake.lock:
            if failures["left"]:
                failures["left"] -= 1
                fake.requests.append("<500>")
                return Response(json.dumps({"error": "overloaded"}), status=500, content_type="application/json")
        return real(request)

    httpserver.clear_all_handlers()
    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(flaky)
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=_backend(_host(httpserver)))
    report = index.insert(lihuaworld_documents(limit=1))
    assert report.inserted and index.stats()["entities"] > 0
    assert fake.requests[:2] == ["<500>", "<500>"]  # retried, not given up


def test_http_500_forever_gives_up_after_bounded_retries(tmp_path, embedder, httpserver, fake):
    fake.mode = "500"
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=_backend(_host(httpserver)))
    index.extractor.max_concurrency = 1
    with pytest.raises(LLMError, match="HTTP 500") as info:
        index.insert(lihuaworld_documents(limit=1))
    assert MODEL in str(info.value) and _host(httpserver) in str(info.value)
    assert len(fake.requests) == 3  # 1 try + max_retries=2, then a clear error
    assert index.document_ids() == []


def test_missing_model_is_not_retried(tmp_path, embedder, httpserver, fake):
    fake.mode = "404"
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=_backend(_host(httpserver)))
    index.extractor.max_concurrency = 1
    with pytest.raises(LLMError) as info:
        index.insert(lihuaworld_documents(limit=1))
    assert f"ollama pull {MODEL}" in str(info.value)
    assert len(fake.requests) == 1


def test_timeout_is_a_clear_error(tmp_path, embedder):
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    release = threading.Event()
    calls: list[int] = []

    def slow(request: Request) -> Response:
        calls.append(1)
        release.wait(2.0)
        return _chat("<|COMPLETE|>")

    server.expect_request("/api/chat").respond_with_handler(slow)
    server.start()
    try:
        index = MiniRAGIndex(tmp_path / "wd", embedder=embedder,
                             llm=_backend(_host(server), timeout=0.3))
        index.extractor.max_concurrency = 1
        with pytest.raises(LLMError, match="timed out") as info:
            index.insert(lihuaworld_documents(limit=1))
        assert MODEL in str(info.value)
        assert len(calls) == 3
    finally:
        release.set()
        server.clear()
        server.stop()


def test_failure_halfway_keeps_finished_batches_and_rerun_resumes(tmp_path, embedder, httpserver, fake,
                                                                  monkeypatch):
    monkeypatch.setattr(index_module, "INSERT_BATCH_CHUNKS", 3)
    docs = lihuaworld_documents(weeks=("week1",))[:8]  # ~2 chunks each
    host = _host(httpserver)

    # a clean build with a healthy server: the reference, and how many prompts a full run needs
    clean = MiniRAGIndex(tmp_path / "clean", embedder=embedder, llm=_backend(host), **CHUNKING)
    clean_report = clean.insert(docs)
    n_chunks = clean_report.chunks
    assert n_chunks >= 12, "need several batches"
    full_prompts = set(fake.requests)
    assert len(fake.extraction_prompts(fake.requests)) == n_chunks
    fake.requests.clear()
    fake.answered.clear()
    fake.extraction_ok = 0

    # the server dies after 7 successful extraction replies (some batches done, one under way)
    fake.fail_after = 7
    workdir = tmp_path / "wd"
    index = MiniRAGIndex(workdir, embedder=embedder, llm=_backend(host), **CHUNKING)
    with pytest.raises(LLMError, match="HTTP 500"):
        index.insert(docs)
    kept = index.document_ids()
    assert 0 < len(kept) < len(docs)
    assert set(kept) == {d.id for d in docs[:len(kept)]}  # whole batches, in order
    # the index is usable as it is: naive needs no model
    naive = index.query("What did Li Hua do?", mode="naive")
    assert naive.chunks and {c.doc_id for c in naive.chunks} <= set(kept)
    answered_before = set(fake.answered)
    assert len(fake.extraction_prompts(answered_before)) >= 7

    # the server recovers; reopening needs no repair, queries in every mode work
    fake.fail_after = None
    fake.requests.clear()
    reopened = MiniRAGIndex(workdir, embedder=embedder, llm=_backend(host), **CHUNKING)
    assert not any(reopened.repair().values())
    assert reopened.document_ids() == kept
    # the batch under way when the server died had replies already: those are in the cache
    kept_chunks = reopened.stats()["chunks"]
    assert len(fake.extraction_prompts(answered_before)) > kept_chunks
    for mode in ("mini", "light", "naive"):
        assert reopened.query("What did Li Hua do?", mode=mode).chunks
    fake.requests.clear()

    report = reopened.insert(docs)
    assert sorted(report.unchanged) == kept
    asked_again = fake.extraction_prompts(fake.requests)
    # nothing the model already answered is asked again ...
    assert not (asked_again & answered_before)
    assert max(Counter(fake.requests).values()) == 1
    # ... and together the two runs asked exactly what a clean build asks
    assert fake.extraction_prompts(answered_before) | asked_again == fake.extraction_prompts(full_prompts)
    assert len(asked_again) < n_chunks
    assert reopened.document_ids() == clean.document_ids()
    # both builds embedded the relation vectors while indexing: the same ones
    assert clean.query("What did Li Hua do?", mode="light").chunks
    assert _graph_state(reopened) == _graph_state(clean)
    assert reopened.vectors.store.ids("relations") == clean.vectors.store.ids("relations") != set()
    print(f"\nmodel faults: {n_chunks} chunks; first run kept {len(kept)}/{len(docs)} documents "
          f"({kept_chunks} chunks) and cached {len(fake.extraction_prompts(answered_before))} extraction "
          f"replies; the rerun asked for {len(asked_again)} chunks")
