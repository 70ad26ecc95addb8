"""Answers: the ``minirag_response`` prompt over a retrieval result, or, without a model,
the retrieved context itself."""

from __future__ import annotations

from dataclasses import dataclass

from minirag_core.llm.base import LLMBackend
from minirag_core.types import RetrievalResult

DEFAULT_RESPONSE_TYPE = "Multiple Paragraphs"


@dataclass
class Answer:
    """The reply to a question, with the retrieval that grounded it."""

    text: str
    result: RetrievalResult
    generated: bool


def no_model_text(result: RetrievalResult) -> str:
    return ("No language model is configured, so no answer was generated. "
            "The retrieved context and its reasoning paths follow.\n\n" + result.to_context())


def answer_from(llm: LLMBackend | None, query: str, result: RetrievalResult,
                response_type: str = DEFAULT_RESPONSE_TYPE) -> Answer:
    """Generate the answer to ``query`` grounded in ``result`` (the context alone without ``llm``)."""
    from minirag_core.llm.prompts import build_answer_prompt

    if llm is None:
        return Answer(no_model_text(result), result, generated=False)
    return Answer(llm.complete(build_answer_prompt(query, result.to_context(), response_type)), result,
                  generated=True)


async def aanswer_from(llm: LLMBackend | None, query: str, result: RetrievalResult,
                       response_type: str = DEFAULT_RESPONSE_TYPE) -> Answer:
    from minirag_core.llm.prompts import build_answer_prompt

    if llm is None:
        return Answer(no_model_text(result), result, generated=False)
    reply = await llm.acomplete(build_answer_prompt(query, result.to_context(), response_type))
    return Answer(reply, result, generated=True)
