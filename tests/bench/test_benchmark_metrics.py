"""Benchmark harness: metrics on hand-made cases, the LiHuaWorld loader on the real data,
and the BM25 baseline's top-k-within-budget. Fast: no embedding model is loaded."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import lihuaworld  # noqa: E402
from benchmarks.common import BM25Baseline, SystemCaches, make_llm, result_sessions  # noqa: E402
from benchmarks.quality.metrics import (  # noqa: E402
    aggregate, aggregate_by_type, all_evidence, answer_in_context, evidence_recall, exact_match, mean,
    normalise_answer, normalised_match, percentile, score_question,
)
from benchmarks.quality.run_benchmark import is_null_reply, markdown_table, parse_args, plot_recall  # noqa: E402

DATA = lihuaworld.default_dir()
needs_data = pytest.mark.skipif(not (DATA / "corpus").is_dir(), reason=f"no LiHuaWorld data at {DATA}")


# -- metrics ------------------------------------------------------------------------------------

def test_normalise_answer():
    assert normalise_answer("  The Cold  Beer! ") == "cold beer"
    assert normalise_answer("An apple, a day.") == "apple day"
    assert normalise_answer("Li Hua's “bakery”") == "li hua s bakery"
    assert normalise_answer("Theatre") == "theatre"  # 'the' only as a word
    assert normalise_answer("...") == ""


def test_evidence_recall_and_all_evidence():
    assert evidence_recall(["a", "b"], ["a", "x", "a"]) == 0.5
    assert evidence_recall(["a", "b"], ["b", "a"]) == 1.0
    assert evidence_recall(["a"], []) == 0.0
    assert evidence_recall([], ["a"]) is None
    assert all_evidence(["a", "b"], ["a", "x"]) == 0.0
    assert all_evidence(["a", "b"], ["b", "c", "a"]) == 1.0
    assert all_evidence([], ["a"]) is None


def test_answer_in_context_word_boundaries():
    texts = ["LiHua: Let's have some cold beer with the hot pot!", "Other: ok"]
    assert answer_in_context("Cold beer", texts) == 1.0
    assert answer_in_context("the cold beer.", texts) == 1.0
    assert answer_in_context("old bee", texts) == 0.0          # not a substring of words
    assert answer_in_context("ok", texts) == 1.0                # found in the second chunk
    assert answer_in_context("hot pot", texts) == 1.0
    assert answer_in_context("pot other", texts) == 0.0         # no match across two chunks
    assert answer_in_context("2", ["train 2 times"]) == 1.0
    assert answer_in_context("2", ["train 12 times"]) == 0.0
    assert answer_in_context("!!", texts) is None


def test_answer_matches():
    assert exact_match(" Yes ", "Yes") == 1.0
    assert exact_match("yes", "Yes") == 0.0
    assert normalised_match("Yes.", "yes") == 1.0
    assert normalised_match("I think the answer is cold beer.", "Cold beer") == 1.0
    assert normalised_match("No", "Yes") == 0.0
    assert normalised_match("Yes, he did.", "Yes") == 1.0
    assert normalised_match("No, but he said yes later.", "Yes") == 0.0
    assert normalised_match("", "Yes") == 0.0
    assert is_null_reply("I don't know.") and is_null_reply("There is insufficient information.")
    assert not is_null_reply("Cold beer")


def test_percentile_and_mean():
    assert percentile([], 50) is None
    assert percentile([5.0], 95) == 5.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile(list(range(101)), 95) == 95
    assert percentile([10, 0], 100) == 10
    assert mean([None, 1, 3]) == 2 and mean([None]) is None


def test_score_question_counts_unknown_evidence_as_missed():
    rec = score_question(["s1"], "beer", "Single", ["s1", "s2"], ["cold beer"], [10, 20], 3.0, n_unknown_evidence=1)
    assert rec["recall"] == 0.5 and rec["all_evidence"] == 0.0
    assert rec["answer_in_context"] == 1.0 and rec["context_tokens"] == 30 and rec["n_chunks"] == 2
    multi = score_question(["s1", "s2"], "Yes", "Multi", ["s2"], ["yes"], [5], 1.0)
    assert multi["recall"] == 0.5 and multi["answer_in_context"] is None  # Single only
    null = score_question([], "Insufficient information", "Null", ["s1"], ["x"], [5], 1.0)
    assert null["recall"] is None and null["all_evidence"] is None and null["answer_in_context"] is None


def test_aggregate_by_type():
    records = [
        score_question(["a"], "x", "Single", ["a"], ["x"], [100], 1.0),
        score_question(["b"], "y", "Single", ["c"], ["z"], [300], 3.0),
        score_question(["a", "b"], "Yes", "Multi", ["a"], ["t"], [200], 2.0),
        score_question([], "Insufficient information", "Null", ["a"], ["t"], [400], 4.0),
    ]
    agg = aggregate_by_type(records)
    o = agg["overall"]
    assert o["n"] == 4 and o["n_recall"] == 3 and o["n_answer"] == 2
    assert o["recall@5"] == pytest.approx(100 * (1 + 0 + 0.5) / 3)
    assert o["all_evidence@5"] == pytest.approx(100 / 3)
    assert o["answer_in_context@5"] == 50.0
    assert o["context_tokens"] == 250.0
    assert o["p50_ms"] == 2.5 and o["p95_ms"] == pytest.approx(3.85)
    assert agg["Single"]["recall@5"] == 50.0 and agg["Multi"]["recall@5"] == 50.0
    assert agg["Null"]["recall@5"] is None and agg["Null"]["n"] == 1
    assert aggregate([])["recall@5"] is None


def test_table_and_plot(tmp_path):
    rec = [score_question(["a"], "x", "Single", ["a"], ["x"], [100], 1.0),
           score_question(["a", "b"], "Yes", "Multi", ["a"], ["t"], [200], 2.0)]
    summary = {"mini": aggregate_by_type(rec), "bm25": aggregate_by_type(rec[:1])}
    table = markdown_table(summary, ["mini", "bm25"])
    lines = table.splitlines()
    assert lines[0].startswith("| system |") and len(lines) == 2 + 3 + 2  # bm25 has no Multi row
    assert "| mini Multi | 1 (1) | 50.0 | 0.0 | – |" in table
    plot_recall(summary, ["mini", "bm25"], tmp_path / "recall.png")
    assert (tmp_path / "recall.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_arguments():
    args = parse_args(["--systems", "mini,bm25", "--limit", "3"])
    assert args.systems == ["mini", "bm25"] and args.limit == 3 and args.answer_systems == ["mini", "bm25"]
    with pytest.raises(SystemExit):
        parse_args(["--systems", "mini,graphrag"])
    assert make_llm(None) is None
    with pytest.raises(SystemExit):
        make_llm("openai:gpt")
    llm = make_llm("ollama:qwen2.5:3b@http://127.0.0.1:1")
    assert llm.model == "qwen2.5:3b" and llm.host == "http://127.0.0.1:1"


# -- BM25 baseline ------------------------------------------------------------------------------

def test_bm25_baseline_top_k_within_budget():
    chunks = {
        "c1": {"text": "Li Hua bought cold beer for the hot pot party", "doc_id": "d1", "order": 0, "n_tokens": 50},
        "c2": {"text": "Wolfgang plays the violin and the hot pot was spicy", "doc_id": "d2", "order": 0, "n_tokens": 40},
        "c3": {"text": "hot pot hot pot hot pot beer", "doc_id": "d3", "order": 0, "n_tokens": 100},
        "c4": {"text": "Nothing relevant here at all", "doc_id": "d4", "order": 0, "n_tokens": 5},
    }
    bm25 = BM25Baseline(chunks, {"d1": {"session": "s1"}})
    result = bm25.query("beer with hot pot", top_k=5, token_budget=1000)
    ids = [c.chunk_id for c in result.chunks]
    assert "c4" not in ids and set(ids) == {"c1", "c2", "c3"}  # only chunks sharing a term
    assert all(c.via == "bm25" for c in result.chunks)
    assert result_sessions(result)[ids.index("c1")] == "s1" and "d2" in result_sessions(result)
    assert [c.chunk_id for c in bm25.query("beer with hot pot", top_k=1).chunks] == ids[:1]
    budget = bm25.query("beer with hot pot", top_k=5, token_budget=95)
    assert sum(c.n_tokens for c in budget.chunks) <= 95 and "c3" not in [c.chunk_id for c in budget.chunks]
    assert bm25.query("the and of", top_k=5).chunks == []  # stopwords only


def test_bm25t_matches_dates_in_other_spellings():
    pytest.importorskip("minirag_core.extraction.temporal")
    chunks = {
        "c1": {"text": "Time: 20260106_13:00\nLiHua: see you at the gym", "doc_id": "d1", "order": 0, "n_tokens": 9},
        "c2": {"text": "Time: 20260210_09:00\nLiHua: see you at the gym", "doc_id": "d2", "order": 0, "n_tokens": 9},
    }
    plain = BM25Baseline(chunks).query("gym on January 6th", top_k=1)
    dated = BM25Baseline(chunks, temporal=True).query("gym on January 6th", top_k=1)
    assert dated.mode == "bm25t" and [c.chunk_id for c in dated.chunks] == ["c1"]
    assert plain.mode == "bm25" and len(plain.chunks) == 1  # a tie: plain BM25 cannot tell the dates apart
    assert parse_args(["--systems", "bm25,bm25t"]).systems == ["bm25", "bm25t"]


def test_system_caches_keep_systems_apart():
    from collections import OrderedDict
    import threading

    class LRU:
        def __init__(self):
            self._data, self._lock = OrderedDict(base=1), threading.Lock()

    class Index:
        class embedder:
            _cache = LRU()

    caches = SystemCaches(Index())
    assert caches.available
    caches.snapshot()
    caches.use("mini")
    Index.embedder._cache._data["question"] = 2
    caches.use("naive")
    assert dict(Index.embedder._cache._data) == {"base": 1}   # naive does not see mini's work
    caches.use("mini")
    assert dict(Index.embedder._cache._data) == {"base": 1, "question": 2}
    caches.forget()
    caches.use("mini")
    assert dict(Index.embedder._cache._data) == {"base": 1}

    class Dummy:
        embedder = object()

    none = SystemCaches(Dummy())
    assert not none.available
    none.snapshot()
    none.use("mini")


# -- loader -------------------------------------------------------------------------------------

def test_session_id_and_normalise_session():
    assert lihuaworld.session_id("Time: 20260408_08:38\nAlice: hi") == "20260408_08:38"
    assert lihuaworld.session_id("Time: 20260105_1100\n") == "20260105_11:00"
    with pytest.raises(ValueError):
        lihuaworld.session_id("Alice: hi\nTime: 20260408_08:38")
    assert lihuaworld.normalise_session(" 20260204_15:00 ") == "20260204_15:00"
    assert lihuaworld.normalise_session("Time: 20260930_16:00") == "20260930_16:00"
    assert lihuaworld.normalise_session("20260619_0815") == "20260619_08:15"
    assert lihuaworld.normalise_session("What") is None


def test_default_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LIHUAWORLD_DIR", str(tmp_path))
    assert lihuaworld.default_dir() == tmp_path.resolve()
    monkeypatch.delenv("LIHUAWORLD_DIR")
    assert lihuaworld.default_dir() == (lihuaworld.REPO_ROOT.parent / "shared" / "data" / "lihuaworld").resolve()


def test_load_questions_other_file_and_repairs(tmp_path):
    rows = [
        {"id": 1, "question": "Q1?", "answer": "Yes", "evidence": "20260101_10:00<and>20260102_11:00", "type": "Multi"},
        {"id": 2, "question": "Q2?", "answer": "Insufficient information", "evidence": "N/A", "type": "Null"},
        {"id": 3, "question": "Q3?", "answer": "Meaning\t20260103_12:00", "evidence": "What", "type": "Single"},
        {"id": 4, "question": "Q4?", "answer": "x", "evidence": "20261231_23:59", "type": "Single"},
        {"id": 5, "question": "Q5?", "answer": "y", "evidence": "Time: 20260101_1000 ", "type": "Single"},
    ]
    path = tmp_path / "qa.json"
    path.write_text(json.dumps(rows))
    qs = lihuaworld.load_questions(path, sessions=["20260101_10:00", "20260102_11:00", "20260103_12:00"])
    assert [q.id for q in qs] == ["1", "2", "3", "4", "5"]
    assert qs[0].evidence == ("20260101_10:00", "20260102_11:00") and qs[0].type == "Multi" and not qs[0].repairs
    assert qs[1].evidence == () and not qs[1].has_evidence
    assert qs[2].answer == "Meaning" and qs[2].evidence == ("20260103_12:00",) and qs[2].repairs
    assert qs[3].evidence == () and qs[3].unknown_evidence == ("20261231_23:59",) and qs[3].has_evidence
    assert qs[4].evidence == ("20260101_10:00",) and qs[4].repairs
    jsonl = tmp_path / "qa.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n")
    assert [q.id for q in lihuaworld.load_questions(jsonl)] == ["1", "2"]


@needs_data
def test_load_corpus_real_data():
    docs = lihuaworld.load_corpus(DATA)
    assert len(docs) == 442 and len({d.id for d in docs}) == 442
    assert [d.id for d in docs] == sorted(d.id for d in docs)
    by_id = {d.id: d for d in docs}
    bakery = by_id["20260408_08:38"]
    assert bakery.metadata == {"session": "20260408_08:38", "path": "corpus/bakery_deliver/20260408.txt"}
    assert bakery.text.startswith("Time: 20260408_08:38\n") and "Alice" in bakery.text
    assert all(d.text.split("\n", 1)[0].strip() == f"Time: {d.id}" for d in docs)
    assert lihuaworld.corpus_bytes(DATA) == sum(len(d.text.encode("utf-8")) for d in docs)


@needs_data
def test_load_questions_real_data():
    docs = lihuaworld.load_corpus(DATA)
    qs = lihuaworld.load_questions(lihuaworld.default_questions_path(DATA), sessions=[d.id for d in docs])
    assert len(qs) == 219 and len({q.id for q in qs}) == 219
    assert Counter(q.type for q in qs) == {"Single": 177, "Multi": 14, "Null": 28}
    assert all(q.has_evidence for q in qs if q.type != "Null")
    assert not any(q.has_evidence for q in qs if q.type == "Null")
    assert all(len(q.evidence) >= 2 for q in qs if q.type == "Multi")
    assert not any(q.unknown_evidence for q in qs)  # every slip in the file is repaired
    sessions = {d.id for d in docs}
    assert all(e in sessions for q in qs for e in q.evidence)
    repaired = {q.id: q for q in qs if q.repairs}
    assert set(repaired) == {"88", "184", "297", "392"}
    assert repaired["297"].answer == "To find deeper meaning and fulfillment in Westworld"
    assert repaired["297"].evidence == ("20260916_16:00",)


def test_paired_interval_brackets_the_mean_difference():
    from benchmarks.quality.suite_report import paired_interval

    same = [{"recall@5": 0.5}] * 10
    assert paired_interval(same, same, "recall@5") == (0.0, 0.0, 0.0)
    ours = [{"recall@5": 1.0}] * 6 + [{"recall@5": 0.0}] * 4
    theirs = [{"recall@5": 0.0}] * 10
    mean, low, high = paired_interval(ours, theirs, "recall@5")
    assert mean == 60.0 and 20.0 < low < mean < high < 100.0
    assert paired_interval(theirs, ours, "recall@5")[0] == -60.0
