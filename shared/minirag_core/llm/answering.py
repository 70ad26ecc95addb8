"""Answers: the ``minirag_response`` prompt over a retrieval result, or, without a model,
the retrieved context itself."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from minirag_core.llm.base import LLMBackend
from minirag_core.types import RetrievalResult

DEFAULT_RESPONSE_TYPE = "Multiple Paragraphs"
EMPTY_REPLY_NOTE = "The model returned an empty reply, so no answer was generated; the retrieved context follows."

logger = logging.getLogger("minirag_core")


@dataclass
class Answer:
    """The reply to a question, with the retrieval that grounded it."""

    text: str
    result: RetrievalResult
    generated: bool
    #: model tokens of the question (query mapping and answer), as on ``result.token_usage``
    token_usage: dict[str, int] = field(default_factory=dict)


def no_model_text(result: RetrievalResult) -> str:
    return ("No language model is configured, so no answer was generated. "
            "The retrieved context and its reasoning paths follow.\n\n" + result.to_context())


def _finish(reply: str, result: RetrievalResult) -> Answer:
    """The model's answer, or the context with a note when the reply is empty."""
    if reply.strip():
        return Answer(reply, result, generated=True)
    logger.warning("answer: %s", EMPTY_REPLY_NOTE)
    result.notes.append(EMPTY_REPLY_NOTE)
    return Answer(f"{EMPTY_REPLY_NOTE}\n\n{result.to_context()}", result, generated=False)


def answer_from(llm: LLMBackend | None, query: str, result: RetrievalResult,
                response_type: str = DEFAULT_RESPONSE_TYPE) -> Answer:
    """Generate the answer to ``query`` grounded in ``result`` (the context alone without ``llm``)."""
    from minirag_core.llm.prompts import build_answer_prompt

    if llm is None:
        return Answer(no_model_text(result), result, generated=False)
    return _finish(llm.complete(build_answer_prompt(query, result.to_context(), response_type)), result)


async def aanswer_from(llm: LLMBackend | None, query: str, result: RetrievalResult,
                       response_type: str = DEFAULT_RESPONSE_TYPE) -> Answer:
    from minirag_core.llm.prompts import build_answer_prompt

    if llm is None:
        return Answer(no_model_text(result), result, generated=False)
    return _finish(await llm.acomplete(build_answer_prompt(query, result.to_context(), response_type)), result)
