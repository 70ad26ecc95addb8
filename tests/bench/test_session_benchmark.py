"""The sessions benchmark's helpers on hand-made cases: how chains are made, the control's cut and
how the tune sweep picks a setting. Fast: no index is built."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.chains import chains_for  # noqa: E402
from benchmarks.quality.session_chains import BASELINE, _cut, summarise  # noqa: E402
from benchmarks.quality.session_tune import choose, grid  # noqa: E402
from minirag_core.types import RetrievalResult, ScoredChunk  # noqa: E402


def _question(qid: str, evidence: tuple[str, ...], kind: str, split: str = devsets.TEST) -> devsets.Question:
    return devsets.Question(qid, f"question {qid}?", "answer", evidence, kind, split=split)


def test_multi_passage_questions_become_hop_chains_on_either_half() -> None:
    questions = [_question("a", ("Alpha", "Beta #2"), "bridge"), _question("b", ("Gamma",), "comparison"),
                 _question("c", ("Delta", "Epsilon"), "comparison", devsets.TUNE)]
    data = devsets.Dataset("passages", [], questions)
    how, chains = chains_for(data)
    assert how == "hops" and [c["id"] for c in chains] == ["hops-a"]
    assert [t["question"] for t in chains[0]["turns"]] == ["What is known about Alpha?", "What is known about Beta?",
                                                          "question a?"]
    assert chains[0]["turns"][1]["evidence"] == ["Beta #2"] and chains[0]["evidence"] == ["Alpha", "Beta #2"]
    assert [c["id"] for c in chains_for(data, devsets.TUNE)[1]] == ["hops-c"]


def test_the_controls_cut_keeps_chunks_near_the_querys_best() -> None:
    chunks = [ScoredChunk(i, i, i, score, 3) for i, score in (("a", 4.0), ("b", 3.0), ("c", 2.7), ("d", 1.0))]
    kept = _cut(RetrievalResult("q", "mini", chunks), 0.7)
    assert [c.chunk_id for c in kept.chunks] == ["a", "b"]


def _summary(tokens: float, recall: float) -> dict:
    record = {"turns": 2, "tokens": tokens, "all_evidence": recall, "evidence_recall": recall,
              "parts_per_turn": [{"chunk_text": 1, "graph_rows": 1, "new": 5, "references": 0},
                                 {"chunk_text": 1, "graph_rows": 1, "new": 2, "references": 3}]}
    return {**summarise([record]), "token_saving_percent": 0.0}


def test_the_sweep_takes_the_best_worst_set_saving_that_loses_no_recall() -> None:
    systems = grid((0.5, 0.9), (True,))
    assert list(systems) == [BASELINE, "admit_ratio=0.5, rows_of_new_chunks=True",
                             "admit_ratio=0.9, rows_of_new_chunks=True"]
    loose, tight = list(systems)[1:]
    results = []
    for base_recall, savings, recalls in ((1.0, (20.0, 45.0), (1.0, 0.0)), (1.0, (30.0, 50.0), (1.0, 1.0))):
        summary = {BASELINE: _summary(100, base_recall)}
        for system, saving, recall in zip((loose, tight), savings, recalls):
            summary[system] = {**_summary(100 - saving, recall), "token_saving_percent": saving}
        results.append({"sessions": {"summary": summary}})
    chosen, worst = choose(results, systems)
    assert chosen == loose and worst == {loose: 20.0}  # the tighter cut saves more but lost a chain's evidence
    assert summarise([])["chains"] == 0
