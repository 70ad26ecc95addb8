"""OllamaBackend against a local HTTP server that speaks Ollama's /api/chat."""

from __future__ import annotations

import json
import socket
import time
from typing import Iterator

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from minirag_core.llm.base import LLMBackend, LLMError
from minirag_core.llm.ollama_backend import OllamaBackend

MODEL = "qwen2.5:3b-instruct"


def chat_reply(content: str, model: str = MODEL) -> dict:
    """Ollama's non-streaming /api/chat response body."""
    return {
        "model": model,
        "created_at": "2026-11-02T10:00:00.000000Z",
        "message": {"role": "assistant", "content": content},
        "done": True,
        "done_reason": "stop",
        "total_duration": 123456789,
        "load_duration": 1234567,
        "prompt_eval_count": 12,
        "prompt_eval_duration": 1234567,
        "eval_count": 5,
        "eval_duration": 1234567,
    }


def backend(server: HTTPServer, **kw) -> OllamaBackend:
    kw.setdefault("timeout", 5.0)
    kw.setdefault("max_retries", 2)
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("backoff_max", 0.05)
    return OllamaBackend(MODEL, host=server.url_for("").rstrip("/"), **kw)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def threaded_server() -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


def test_is_llm_backend() -> None:
    b = OllamaBackend(MODEL)
    assert isinstance(b, LLMBackend)
    assert b.name == f"ollama:{MODEL}"
    assert b.options["num_ctx"] == 8192 and b.options["temperature"] == 0.0


def test_success_sends_expected_request(httpserver: HTTPServer) -> None:
    seen: list[dict] = []

    def handler(request: Request) -> Response:
        seen.append(json.loads(request.data))
        return Response(json.dumps(chat_reply("hello")), content_type="application/json")

    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(handler)
    assert backend(httpserver, keep_alive="5m").complete("Say hi", json_mode=True) == "hello"
    body = seen[0]
    assert body["model"] == MODEL
    assert body["messages"] == [{"role": "user", "content": "Say hi"}]
    assert body["format"] == "json"
    assert body["options"]["num_ctx"] == 8192 and body["options"]["temperature"] == 0.0
    assert body["keep_alive"] == "5m"
    assert body["stream"] is False


async def test_success_async(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/api/chat", method="POST").respond_with_json(chat_reply("async hello"))
    b = backend(httpserver)
    assert await b.acomplete("hi") == "async hello"
    assert await b.acomplete("hi again") == "async hello"


def _flaky_handler(fail_times: int, calls: list[int]):
    def handler(request: Request) -> Response:
        calls.append(1)
        if len(calls) <= fail_times:
            return Response(json.dumps({"error": "server overloaded"}), status=500, content_type="application/json")
        return Response(json.dumps(chat_reply("recovered")), content_type="application/json")

    return handler


def test_http_500_then_success_is_retried(httpserver: HTTPServer) -> None:
    calls: list[int] = []
    httpserver.expect_request("/api/chat").respond_with_handler(_flaky_handler(1, calls))
    assert backend(httpserver).complete("x") == "recovered"
    assert len(calls) == 2


async def test_http_500_then_success_is_retried_async(httpserver: HTTPServer) -> None:
    calls: list[int] = []
    httpserver.expect_request("/api/chat").respond_with_handler(_flaky_handler(2, calls))
    assert await backend(httpserver).acomplete("x") == "recovered"
    assert len(calls) == 3


def test_http_500_forever_gives_up(httpserver: HTTPServer) -> None:
    calls: list[int] = []
    httpserver.expect_request("/api/chat").respond_with_handler(_flaky_handler(99, calls))
    with pytest.raises(LLMError, match="HTTP 500") as info:
        backend(httpserver, max_retries=2).complete("x")
    assert MODEL in str(info.value)
    assert len(calls) == 3


def _missing_model(calls: list[int]):
    def handler(request: Request) -> Response:
        calls.append(1)
        return Response(json.dumps({"error": f"model '{MODEL}' not found"}), status=404,
                        content_type="application/json")

    return handler


def test_model_not_found_is_not_retried(httpserver: HTTPServer) -> None:
    calls: list[int] = []
    httpserver.expect_request("/api/chat").respond_with_handler(_missing_model(calls))
    with pytest.raises(LLMError) as info:
        backend(httpserver).complete("x")
    msg = str(info.value)
    assert MODEL in msg and f"ollama pull {MODEL}" in msg and httpserver.url_for("").rstrip("/") in msg
    assert len(calls) == 1


async def test_model_not_found_async(httpserver: HTTPServer) -> None:
    calls: list[int] = []
    httpserver.expect_request("/api/chat").respond_with_handler(_missing_model(calls))
    with pytest.raises(LLMError, match="ollama pull"):
        await backend(httpserver).acomplete("x")
    assert len(calls) == 1


def test_unreachable_host() -> None:
    host = f"http://127.0.0.1:{closed_port()}"
    b = OllamaBackend(MODEL, host=host, max_retries=1, backoff_base=0.01, timeout=2)
    with pytest.raises(LLMError) as info:
        b.complete("x")
    msg = str(info.value)
    assert host in msg and MODEL in msg and "ollama serve" in msg


async def test_unreachable_host_async() -> None:
    host = f"http://127.0.0.1:{closed_port()}"
    b = OllamaBackend(MODEL, host=host, max_retries=1, backoff_base=0.01, timeout=2)
    with pytest.raises(LLMError, match="ollama serve") as info:
        await b.acomplete("x")
    assert host in str(info.value)


def _slow(calls: list[int], delay: float):
    def handler(request: Request) -> Response:
        calls.append(1)
        time.sleep(delay)
        return Response(json.dumps(chat_reply("too late")), content_type="application/json")

    return handler


def test_timeout(threaded_server: HTTPServer) -> None:
    calls: list[int] = []
    threaded_server.expect_request("/api/chat").respond_with_handler(_slow(calls, 1.0))
    with pytest.raises(LLMError, match="timed out") as info:
        backend(threaded_server, timeout=0.2, max_retries=1).complete("x")
    assert MODEL in str(info.value)
    assert len(calls) == 2


async def test_timeout_async(threaded_server: HTTPServer) -> None:
    calls: list[int] = []
    threaded_server.expect_request("/api/chat").respond_with_handler(_slow(calls, 1.0))
    with pytest.raises(LLMError, match="timed out"):
        await backend(threaded_server, timeout=0.2, max_retries=1).acomplete("x")
    assert len(calls) == 2
