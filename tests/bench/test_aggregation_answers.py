"""The model run over aggregated and plain mini contexts (``benchmarks/quality/aggregation_answers.py``)
with a scripted stand-in model and index: what each condition asks, the records, the summary and
the table. Fast: no model, no index."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.aggregation_answers import answer_question, evidence_recall, summarise, table  # noqa: E402
from benchmarks.quality.answer_scoring import rate_with_ci  # noqa: E402
from benchmarks.quality.model_answers import Answerer  # noqa: E402
from minirag_core.llm.usage import record_usage  # noqa: E402


class _ScriptedBackend:
    """Replies "Lisbon" when the prompt shows cluster rows, else "I do not know"; one token per character."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.llama = SimpleNamespace(n_tokens=0, _input_ids=[],
                                     tokenize=lambda data, add_bos=True, special=False: list(data))

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        reply = "Lisbon" if "Clusters" in prompt else "I do not know"
        record_usage("scripted", len(prompt), len(reply))
        return reply


class _Index:
    """Two chunks (one evidence document of two); with ``aggregate`` the context shows a cluster."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def query(self, question: str, **options):
        self.calls.append(options)
        text = "Clusters: Lisbon / Portugal" if options["aggregate"] else "Relationships: a long table of rows"
        chunks = [SimpleNamespace(doc_id="d1"), SimpleNamespace(doc_id="d9")]
        return SimpleNamespace(chunks=chunks, to_context=lambda: text)


def _answerer() -> Answerer:
    answerer = Answerer.__new__(Answerer)
    answerer.backend = _ScriptedBackend()
    return answerer


def test_each_question_is_answered_from_both_contexts_with_the_same_chunks() -> None:
    answerer, index = _answerer(), _Index()
    question = devsets.Question("q1", "Where is the capital?", "Lisbon", ("d1", "d2"), "2hop")
    row = answer_question(answerer, index, question, ["Lisbon"], budget=300)
    assert [c["aggregate"] for c in index.calls] == [False, True]
    assert all(c["mode"] == "mini" and c["top_k"] == 5 and c["token_budget"] == 300 for c in index.calls)
    plain, lean = row["mini"], row["mini+aggregate"]
    assert (plain["correct"], lean["correct"]) == (0.0, 1.0) and lean["f1"] == 1.0
    assert plain["recall@5"] == lean["recall@5"] == 0.5 and plain["docs"] == ["d1", "d9"]
    assert lean["context_tokens"] == len("Clusters: Lisbon / Portugal")
    assert plain["prompt_tokens"] == len(answerer.backend.prompts[0]) > plain["context_tokens"]
    assert "Where is the capital?" in answerer.backend.prompts[1] and "Clusters" in answerer.backend.prompts[1]


def _answer(correct: float, tokens: int, recall: float | None, reply: str = "x") -> dict:
    return {"correct": correct, "f1": correct / 2, "context_tokens": tokens, "prompt_tokens": tokens + 100,
            "seconds": 2.0, "recall@5": recall, "reply": reply}


def test_the_summary_pairs_the_conditions_and_skips_questions_without_evidence_in_recall() -> None:
    rows = [{"id": "a", "mini": _answer(0.0, 300, 1.0, "same"), "mini+aggregate": _answer(1.0, 100, 1.0, "same ")},
            {"id": "b", "mini": _answer(1.0, 500, None), "mini+aggregate": _answer(1.0, 300, None)},
            {"id": "c", "mini": _answer(0.0, 400, 0.0), "mini+aggregate": _answer(0.0, 200, 0.0)}]
    s = summarise(rows)
    assert s["mini"]["questions"] == 3 and s["mini"]["correct"] == 1 / 3 and s["mini+aggregate"]["correct"] == 2 / 3
    assert s["mini"]["context_tokens"] == 400 and s["mini+aggregate"]["prompt_tokens"] == 300
    assert s["mini"]["recall@5"] == 0.5
    assert s["paired"]["correct_difference"] == 1 / 3 and s["paired"]["same_reply"] == 3
    low, high = s["paired"]["correct_difference_ci95"]
    assert 0.0 <= low <= 1 / 3 <= high <= 1.0


def test_the_table_has_a_row_per_set_and_condition_and_a_paired_row() -> None:
    rows = [{"id": "a", "mini": _answer(0.0, 300, 1.0), "mini+aggregate": _answer(1.0, 100, 1.0, "y")}]
    text = table({"sets": {"musique_50": {"questions": rows}, "empty": {"questions": []}}})
    assert "| musique_50 | mini | 1 | 0.0 [0, 0] | 0.0 | 300 | 400 | 100.0 | 2.0 |" in text
    assert "| musique_50 | mini+aggregate | 1 | 100.0 [100, 100] | 50.0 | 100 | 200 | 100.0 | 2.0 |" in text
    assert "| musique_50 | 1 | +100.0 [+100, +100] | 0 |" in text
    assert "| empty | mini | 0 | - | - | - | - | - | - |" in text


def test_rates_and_differences_are_written_as_percentages_with_their_interval() -> None:
    assert rate_with_ci(0.125, (0.04, 0.25)) == "12.5 [4, 25]"
    assert rate_with_ci(-0.042, (-0.08, 0.17), signed=True) == "-4.2 [-8, +17]"
    assert rate_with_ci(None, None) == "-" and rate_with_ci(0.5, None) == "50.0"
    assert evidence_recall(["d1", "d2"], ["d2", "d3"]) == 0.5 and evidence_recall([], ["d1"]) is None
