"""The model run over chains (``benchmarks/quality/session_answers.py``) on hand-made cases: the
conversation prompt, gold answers, the cache count and the summary. Fast: no model, no index."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.model_answers import Answerer, gold_answers  # noqa: E402
from benchmarks.quality.session_answers import follow_up_prompt, summarise  # noqa: E402
from minirag_core.llm.prompts import build_answer_prompt  # noqa: E402


def test_a_follow_up_continues_the_conversation_with_its_own_tables_and_question() -> None:
    first = build_answer_prompt("Who founded Acme?", "ctx-one")
    second = follow_up_prompt(first, "Maria Okafor.", "Where did she study?", "ctx-two")
    assert second.startswith(first + "Maria Okafor.")
    tail = second[len(first + "Maria Okafor."):]
    assert tail.index("ctx-two") < tail.index("Where did she study?") and "ctx-one" not in tail
    assert second.rstrip().endswith("---Answer---")


def test_gold_answers_are_the_questions_with_an_answer() -> None:
    questions = [devsets.Question("a", "Q a?", "Lisbon", ("d",), "2hop", ("Lisboa",)),
                 devsets.Question("b", "Q b?", "", ("d",), "2hop"),
                 devsets.Question("c", "Q c?", "x", ("d",), "Null")]
    assert gold_answers(devsets.Dataset("s", [], questions)) == {"Q a?": ["Lisbon", "Lisboa"]}


class _Tokens:
    """A stand-in llama.cpp model: one token per character, holding the last prompt evaluated."""

    def __init__(self, held: str) -> None:
        self._input_ids, self.n_tokens = [0, *map(ord, held)], len(held) + 1

    def tokenize(self, data: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return [0] * add_bos + list(map(ord, data.decode()))


def test_the_cached_prefix_is_what_the_last_call_left_in_the_model() -> None:
    answerer = Answerer.__new__(Answerer)
    answerer.backend = SimpleNamespace(llama=_Tokens("abcdef"))
    assert answerer.cached_prefix("abcxyz") == 4  # BOS and "abc"
    assert answerer.cached_prefix("zzz") == 1


def _answer(prompt: int, correct: float | None = None) -> dict:
    record = {"context_tokens": prompt // 2, "prompt_tokens": prompt, "prompt_tokens_evaluated": prompt // 4,
              "completion_tokens": 10, "seconds": 2.0}
    return record if correct is None else {**record, "correct": correct, "f1": correct / 2}


def test_the_summary_scores_only_turns_with_a_gold_answer_and_counts_tokens_per_chain() -> None:
    chains = [{"id": "c1", "turns": [{"independent": _answer(100), "session": _answer(100)},
                                     {"independent": _answer(200, 1.0), "session": _answer(400, 0.0)}]},
              {"id": "c2", "turns": [{"independent": _answer(100, 0.0), "session": _answer(100, 1.0)}]}]
    s = summarise(chains)
    assert s["independent"]["answers"] == 3 and s["independent"]["scored"] == 2
    assert s["independent"]["correct"] == 0.5 and s["session"]["f1"] == 0.25
    assert s["independent"]["prompt_tokens_per_chain"] == 200 and s["session"]["prompt_tokens_per_chain"] == 300
    assert s["session"]["prompt_tokens_evaluated_per_chain"] == 75
