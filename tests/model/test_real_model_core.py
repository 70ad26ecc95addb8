"""The model path end to end with the real model through the core: model extraction (its real
output through the tolerant parser, the offline extractor where a reply holds no record), a mini
query with model query mapping, MiniRAG's answer prompt, and token counts equal to llama.cpp's."""

from __future__ import annotations

import pytest

from minirag_core.llm.llamacpp_backend import LlamaCppBackend
from tests.model.conftest import DOCUMENTS, QUESTION, UsageRecorder

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def recorded(llama):
    return UsageRecorder(llama)


@pytest.fixture(scope="module")
def backend(gguf_path, recorded):
    return LlamaCppBackend(gguf_path, n_ctx=4096, max_tokens=160, llama=recorded)


def test_index_query_and_answer_with_the_real_model(tmp_path_factory, embedder, backend, recorded):
    from minirag_core.extraction.llm_extractor import LLMExtractor
    from minirag_core.extraction.offline_extractor import OfflineExtractor
    from minirag_core.indexing.build_usage import read_build_usage
    from minirag_core.indexing.index import MiniRAGIndex

    workdir = tmp_path_factory.mktemp("model_index")
    extractor = LLMExtractor(backend, max_gleaning=0, fallback=OfflineExtractor(embedder))  # one prompt per chunk
    index = MiniRAGIndex(workdir, embedder=embedder, llm=backend, extractor=extractor, workers=1)
    report = index.insert(DOCUMENTS)
    prompt, completion, calls = recorded.totals()
    assert report.chunks == 2 and calls == 2  # one extraction prompt per chunk
    # the counts on the report are llama.cpp's own, summed, and the workdir keeps them for `minirag info`
    assert (report.token_usage["prompt_tokens"], report.token_usage["completion_tokens"],
            report.token_usage["calls"]) == (prompt, completion, calls)
    assert read_build_usage(workdir).to_dict() == report.token_usage
    # every chunk has entities: the model's records, or the offline extractor's where none could be read
    assert index.stats()["entities"] > 0
    assert extractor.fallback_chunks <= 2

    before = len(recorded.usages)
    answer = index.answer(QUESTION, mode="mini")
    assert answer.result.mapping is not None and answer.result.mapping.source in ("model", "fallback")
    assert answer.result.chunks and answer.result.chunks[0].doc_id == "dinner"
    prompt, completion, calls = recorded.totals(before)
    assert calls == 2  # query mapping and the answer
    assert answer.token_usage == answer.result.token_usage == {
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "calls": 2, "uncounted_calls": 0}
    # the reply is the model's, or (for an empty one) the context with a note saying so
    assert answer.text.strip() and (answer.generated or "empty reply" in answer.result.notes[-1])
    index.close()


def test_a_prompt_longer_than_the_window_is_cut_not_refused(gguf_path):
    small = LlamaCppBackend(gguf_path, n_ctx=512, max_tokens=16, stop=["\n"], n_threads=2)
    prompt = "Notes:\n" + "The weather was mild and nothing happened. " * 100 + "\nQuestion: What is 2 + 2?\nAnswer:"
    assert len(small.llama.tokenize(prompt.encode())) > 512
    before = small.usage.prompt_tokens
    small.complete(prompt)
    assert small.trimmed_calls == 1 and 0 < small.usage.prompt_tokens - before <= 512 - 16
