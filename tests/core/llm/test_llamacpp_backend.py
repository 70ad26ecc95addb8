"""LlamaCppBackend without llama.cpp: a scripted ``Llama`` stand-in checks prompting styles,
stop sequences, the context guard and the token counts taken from llama.cpp's ``usage``."""

from __future__ import annotations

import asyncio

import pytest

from minirag_core.llm.base import LLMBackend, LLMError
from minirag_core.llm.llamacpp_backend import DEFAULT_STOP, LlamaCppBackend, load_llama
from minirag_core.llm.prompt_fit import fit_tokens
from minirag_core.llm.usage import metered


class ScriptedLlama:
    """Tokens are bytes (one per character); replies come from ``replies`` in order."""

    def __init__(self, n_ctx: int, replies: list[str]) -> None:
        self._n_ctx = n_ctx
        self.replies = list(replies)
        self.calls: list[dict] = []

    def n_ctx(self) -> int:
        return self._n_ctx

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(text)

    def detokenize(self, tokens: list[int]) -> bytes:
        return bytes(tokens)

    def _usage(self, prompt: str, reply: str) -> dict:
        return {"prompt_tokens": len(prompt) + 1, "completion_tokens": len(reply),
                "total_tokens": len(prompt) + 1 + len(reply)}

    def create_completion(self, prompt: str, **options) -> dict:
        self.calls.append({"prompt": prompt, **options})
        reply = self.replies.pop(0)
        return {"choices": [{"text": reply, "finish_reason": "stop"}], "usage": self._usage(prompt, reply)}

    def create_chat_completion(self, messages: list[dict], **options) -> dict:
        self.calls.append({"messages": messages, **options})
        reply = self.replies.pop(0)
        return {"choices": [{"message": {"role": "assistant", "content": reply}}],
                "usage": self._usage(messages[0]["content"], reply)}


def test_completion_style_sends_raw_text_with_stops_and_counts_usage():
    fake = ScriptedLlama(4096, ["Tomato soup", "Yes"])
    backend = LlamaCppBackend("/models/base.gguf", llama=fake, max_tokens=32)
    assert isinstance(backend, LLMBackend)
    assert backend.name == "llamacpp:base.gguf"
    with metered() as usage:
        assert backend.complete("What is for lunch?") == "Tomato soup"
        assert asyncio.run(backend.acomplete("Again?")) == "Yes"
    assert fake.calls[0]["prompt"] == "What is for lunch?"
    assert fake.calls[0]["stop"] == list(DEFAULT_STOP) and fake.calls[0]["max_tokens"] == 32
    assert (usage.prompt_tokens, usage.completion_tokens, usage.calls) == (19 + 7, 11 + 3, 2)
    assert backend.usage.to_dict() == usage.to_dict()


def test_chat_style_sends_one_user_message_and_asks_json_when_told():
    fake = ScriptedLlama(4096, ['{"a": 1}'])
    backend = LlamaCppBackend("m.gguf", llama=fake, prompt_style="chat", stop=["END"])
    assert backend.complete("map this", json_mode=True) == '{"a": 1}'
    call = fake.calls[0]
    assert call["messages"] == [{"role": "user", "content": "map this"}]
    assert call["response_format"] == {"type": "json_object"} and call["stop"] == ["END"]


def test_a_prompt_longer_than_the_context_loses_its_middle_not_its_ends():
    fake = ScriptedLlama(200, ["ok"])
    backend = LlamaCppBackend("m.gguf", llama=fake, n_ctx=200, max_tokens=50)
    prompt = "INSTRUCTIONS " + "x" * 1000 + " QUESTION?"
    assert backend.complete(prompt) == "ok"
    sent = fake.calls[0]["prompt"]
    assert len(sent) <= 200 - 50
    assert sent.startswith("INSTRUCTIONS") and sent.endswith("QUESTION?") and "\n...\n" in sent
    assert backend.trimmed_calls == 1


def test_a_prompt_that_fits_is_sent_unchanged():
    fake = ScriptedLlama(4096, ["ok"])
    LlamaCppBackend("m.gguf", llama=fake).complete("short prompt")
    assert fake.calls[0]["prompt"] == "short prompt"


def test_fit_tokens_keeps_exactly_the_budget():
    fitted = fit_tokens(list(range(100)), 20, marker=[-1])
    assert len(fitted.tokens) == 20 and fitted.dropped == 81
    assert fitted.tokens[0] == 0 and fitted.tokens[-1] == 99 and -1 in fitted.tokens
    assert fit_tokens([1, 2], 5).tokens == [1, 2]
    with pytest.raises(ValueError):
        fit_tokens([1], 0)


def test_library_failures_and_bad_settings_are_clear_errors(tmp_path):
    class Broken(ScriptedLlama):
        def create_completion(self, prompt, **options):
            raise RuntimeError("decode failed")

    with pytest.raises(LLMError, match="decode failed"):
        LlamaCppBackend("m.gguf", llama=Broken(4096, [])).complete("hi")
    with pytest.raises(ValueError):
        LlamaCppBackend("m.gguf", n_ctx=100, max_tokens=100)
    with pytest.raises(ValueError):
        LlamaCppBackend("m.gguf", prompt_style="instruct")  # type: ignore[arg-type]
    with pytest.raises(LLMError, match="no GGUF model file|not installed"):
        load_llama(str(tmp_path / "missing.gguf"))


def test_cli_spec_builds_the_backend(tmp_path):
    from minirag_core.interfaces.cli_common import CLIError, llm_from_spec

    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    backend = llm_from_spec(f"llamacpp:{model}", None)
    assert isinstance(backend, LlamaCppBackend) and backend.prompt_style == "completion"
    assert llm_from_spec(f"llamacpp-chat:{model}", None).prompt_style == "chat"
    with pytest.raises(CLIError, match="no model file"):
        llm_from_spec(f"llamacpp:{tmp_path / 'none.gguf'}", None)
    with pytest.raises(CLIError, match="llamacpp:PATH"):
        llm_from_spec("vllm:x", None)


def test_calls_to_one_in_process_llama_cpp_model_share_a_lock():
    from minirag_core.llm.llamacpp_backend import call_lock, in_process_llama

    Llama = type("Llama", (), {"__module__": "llama_cpp.llama", "create_completion": lambda self: None})
    model = Llama()
    wrapper = type("ChatLlamaCpp", (), {})()
    wrapper.client = model
    assert in_process_llama(wrapper) is model and call_lock(wrapper) is call_lock(model)
    assert call_lock(ScriptedLlama(10, [])) is None and call_lock(object()) is None
