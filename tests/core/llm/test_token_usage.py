"""Token usage: each backend's own counts (Ollama's ``prompt_eval_count``/``eval_count`` in a
scripted reply of the real API's shape, a LangChain message's ``usage_metadata`` or provider
``llm_output``, a LlamaIndex response's raw ``usage``) summed per query, per answer and per
index build, and shown by ``minirag index`` and ``minirag info``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from minirag_core.llm.ollama_backend import OllamaBackend
from minirag_core.llm.usage import TokenUsage, counts_tokens, metered, record_usage
from tests.core.llm.test_ollama_backend import MODEL, chat_reply

EXTRACTION = ('("entity"<|>"Wolfgang"<|>"person"<|>"Wolfgang cooks.")##\n'
              '("entity"<|>"Tomato Soup"<|>"food"<|>"A soup.")##\n'
              '("relationship"<|>"Wolfgang"<|>"Tomato Soup"<|>"Wolfgang suggests it."<|>"cooking"<|>2)<|COMPLETE|>')


def scripted_ollama(server: HTTPServer) -> list[dict]:
    """Ollama's /api/chat: each reply's counts grow with the call, so sums are checkable."""
    sent: list[dict] = []

    def handler(request: Request) -> Response:
        body = json.loads(request.data)
        prompt = body["messages"][0]["content"]
        if body.get("format") == "json":
            content = '{"answer_type_keywords": ["FOOD"], "entities_from_query": ["Wolfgang"]}'
        elif "-Goal-" in prompt and "---Goal---" not in prompt:  # extraction and its gleaning
            content = EXTRACTION if "Wolfgang" in prompt else "nothing readable here"
        else:
            content = "Tomato soup."
        reply = chat_reply(content)
        reply["prompt_eval_count"], reply["eval_count"] = 100 + len(sent), 10 + len(sent)
        sent.append(reply)
        return Response(json.dumps(reply), content_type="application/json")

    server.expect_request("/api/chat", method="POST").respond_with_handler(handler)
    return sent


def test_meters_nest_and_follow_tasks_and_threads() -> None:
    with metered() as outer:
        record_usage("m", 3, 1)
        with metered() as inner:
            asyncio.run(asyncio.to_thread(record_usage, "m", 5, 2))
        record_usage("m", None, None)  # a model that reports nothing is counted as a call only
    assert (inner.prompt_tokens, inner.completion_tokens, inner.calls) == (5, 2, 1)
    assert outer.to_dict() == {"prompt_tokens": 8, "completion_tokens": 3, "total_tokens": 11, "calls": 3,
                               "uncounted_calls": 1}
    total = TokenUsage.from_dict(outer.to_dict())
    total.merge(inner)
    assert total.prompt_tokens == 13 and total.calls == 4

    class Result:
        token_usage: dict = {}

    @counts_tokens
    def query() -> Result:
        record_usage("m", 7, 4)
        return Result()

    assert query().token_usage["total_tokens"] == 11


def test_ollama_counts_reach_the_query_answer_build_and_cli(httpserver: HTTPServer, tmp_path: Path, embedder,
                                                            capsys) -> None:
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.interfaces.cli import main
    from minirag_core.types import Document

    sent = scripted_ollama(httpserver)
    llm = OllamaBackend(MODEL, host=httpserver.url_for("").rstrip("/"), max_retries=0)
    index = MiniRAGIndex(tmp_path / "w", embedder=embedder, llm=llm, workers=1)
    report = index.insert([Document("a", "Wolfgang: let's make tomato soup tonight."),
                           Document("b", "The library opens at nine on weekdays.")])
    built = sent[:]
    assert report.token_usage == {"prompt_tokens": sum(r["prompt_eval_count"] for r in built),
                                  "completion_tokens": sum(r["eval_count"] for r in built),
                                  "total_tokens": sum(r["prompt_eval_count"] + r["eval_count"] for r in built),
                                  "calls": len(built), "uncounted_calls": 0}
    # the chunk the model gave nothing readable for was extracted offline, and said so
    assert index.extractor.fallback_chunks == 1

    result = index.query("What did Wolfgang suggest?", mode="mini")
    mapped = sent[len(built):]
    assert len(mapped) == 1 and result.mapping.source == "model"
    assert result.token_usage["prompt_tokens"] == mapped[0]["prompt_eval_count"]
    assert json.loads(result.to_json())["token_usage"]["completion_tokens"] == mapped[0]["eval_count"]
    assert index.query("What did Wolfgang suggest?", mode="naive").token_usage["calls"] == 0
    # a mapping served from the workdir's reply cache costs no tokens
    assert index.query("What did Wolfgang suggest?", mode="light").token_usage["calls"] == 0

    answer = asyncio.run(index.aanswer("Who suggested tomato soup?", mode="light"))
    asked = sent[len(built) + 1:]
    assert answer.text == "Tomato soup." and len(asked) == 2
    assert answer.token_usage == answer.result.token_usage
    assert answer.token_usage["prompt_tokens"] == sum(r["prompt_eval_count"] for r in asked)
    assert llm.usage.calls == len(sent) and llm.usage.prompt_tokens == sum(r["prompt_eval_count"] for r in sent)
    index.close()

    assert main(["info", "--workdir", str(tmp_path / "w")]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["model_token_usage"] == report.token_usage


def test_adapters_read_the_frameworks_counts() -> None:
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, LLMResult
    from llama_index.core.base.llms.types import CompletionResponse

    from langchain_minirag.adapters import llm_result_usage
    from llama_index_minirag.adapters import response_usage

    with_metadata = LLMResult(generations=[[ChatGeneration(message=AIMessage(
        "hi", usage_metadata={"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}))]])
    assert llm_result_usage(with_metadata) == (9, 2)
    provider = LLMResult(generations=[[ChatGeneration(message=AIMessage("hi"))]],
                         llm_output={"token_usage": {"prompt_tokens": 7, "completion_tokens": 3}})
    assert llm_result_usage(provider) == (7, 3)
    assert response_usage(CompletionResponse(text="x", raw={"usage": {"prompt_tokens": 4, "completion_tokens": 1}})) == (4, 1)
    assert response_usage(CompletionResponse(text="x", raw={"prompt_eval_count": 6, "eval_count": 2})) == (6, 2)
    assert response_usage(CompletionResponse(text="x")) == (None, None)
