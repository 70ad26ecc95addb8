"""Temporal normalisation lets a question's date spelling meet the session's."""

from __future__ import annotations

from minirag_core.lexical import LexicalChunkIndex
from minirag_core.temporal import temporal_tokens


def test_spellings_of_one_day_share_a_token():
    for text in ["Time: 20260106_13:00", "on January 6th", "Jan 6", "6th of January", "2026-01-06"]:
        assert "date0106" in temporal_tokens(text), text


def test_month_alone_and_false_friends():
    assert temporal_tokens("two conversations in December") == ["month12"]
    assert temporal_tokens("May I come over?") == []
    assert temporal_tokens("Call me at 3 PM") == []


def test_bm25_finds_a_session_by_its_date():
    index = LexicalChunkIndex()
    index.build({"a": "Time: 20260106_13:00\nLiHua: the tap is broken", "b": "Time: 20260405_10:00\nLiHua: the tap works"})
    scores = index.scores("What does Li Hua report to Adam on January 6th about the tap?")
    assert scores["a"] > scores.get("b", 0.0)
    assert "b" in index.scores("What happened on 20260405?") and "a" not in index.scores("What happened on 20260405?")
