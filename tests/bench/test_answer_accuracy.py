"""The answer benchmark's query-mapper comparison runs on the index's public retrieval: the same
mapping as the index's own gives the same recall@5 through both paths."""

from __future__ import annotations

from benchmarks.quality import devsets
from benchmarks.quality.answer_accuracy import mapper_record
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document


def test_mapper_record_scores_the_given_mapping_and_the_offline_one(embedder, tmp_path) -> None:
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert([Document("pier", "Marta Olsen repaired the brass telescope on the north pier of Halden harbour."),
                  Document("storm", "The north pier of Halden harbour was rebuilt by Jonas Berg after the storm."),
                  Document("rain", "Rain fell all week and the roads flooded near the mill.")])
    question = devsets.Question(id="q1", question="Who rebuilt the north pier of Halden harbour?",
                                answer="Jonas Berg", evidence=("storm",), type="single")
    record = mapper_record(None, index, question, index.query_mapper)  # the offline mapper as "the model"
    assert record["source"] == "offline" and record["entities"]
    assert record["recall@5_model"] == record["recall@5_offline"] == 1.0


def test_reports_of_two_shares_merge_into_one_summary() -> None:
    from benchmarks.quality.answer_accuracy import merge_reports

    def record(qid: str, mode: str, correct: float) -> dict:
        return {"id": qid, "mode": mode, "correct": correct, "f1": correct, "context_tokens": 10,
                "prompt_tokens": 20, "completion_tokens": 3, "seconds": 1.0, "evidence_recall@5": 1.0}

    def report(ids: list[str], correct: float) -> dict:
        answers = [record(q, m, correct) for q in ids for m in ("naive", "light", "mini")]
        return {"model": "m", "sets": {"s": {"answers": answers, "mapping": []}}}

    first, second = report(["q1", "q2"], 1.0), report(["q2", "q3", "q4"], 0.0)  # q2 in both: kept once
    merged = merge_reports([first, second])["sets"]["s"]
    assert len(merged["answers"]) == 12
    assert merged["summary"]["mini"]["n"] == 4 and merged["summary"]["mini"]["correct"] == 0.5
    assert merged["mapping_summary"]["n"] == 0
