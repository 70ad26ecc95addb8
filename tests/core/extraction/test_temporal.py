"""Temporal normalisation lets a question's date spelling meet the session's."""

from __future__ import annotations

from minirag_core.search.lexical import LexicalChunkIndex
from minirag_core.extraction.temporal import temporal_tokens


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


def test_iso_numeric_and_written_forms_share_one_day():
    from minirag_core.extraction.temporal import canonical_date

    for text in ["2025-03-03", "03/03/2025", "March 3, 2025", "3 March 2025", "the 3rd of March, 2025",
                 "Mar. 3rd 2025", "2025/03/03"]:
        assert "date20250303" in temporal_tokens(text) and "date0303" in temporal_tokens(text), text
    for text in ["March 3, 2025", "3 March 2025", "2025-03-03", "3/3/2025"]:
        assert canonical_date(text) == "2025-03-03", text
    assert canonical_date("March 3rd") == canonical_date("3 March") == "March 3"  # no year: month and day
    assert canonical_date("March 3rd and more") is None


def test_numeric_day_month_order_is_a_setting():
    from minirag_core.extraction.temporal import canonical_date

    assert canonical_date("03/04/2025") == "2025-03-04"  # month first by default
    assert canonical_date("03/04/2025", day_first=True) == "2025-04-03"
    for day_first in (False, True):  # a number above 12 decides, whatever the setting
        assert canonical_date("25/03/2025", day_first=day_first) == "2025-03-25"
        assert canonical_date("03/25/2025", day_first=day_first) == "2025-03-25"
    assert canonical_date("13/14/2025") is None
    assert temporal_tokens("v1.2.10 and 3.5") == []  # versions and decimals are not dates


def test_a_bare_eight_digit_number_counts_only_as_a_timestamp():
    assert temporal_tokens("order number 20250304 shipped") == []
    assert "date0304" in temporal_tokens("What happened on 20250304?")
    assert "date0304" in temporal_tokens("Date: 20250304")
    assert "date0304" in temporal_tokens("20250304_09:30 meeting")


def test_extracted_dates_are_named_canonically():
    from minirag_core.extraction.spans import find_dates

    names = [d[2] for d in find_dates("We met on 3 March 2025, again on March 3rd and on 03/04/2025 at 10:30.")]
    assert names == ["2025-03-03", "March 3", "2025-03-04", "10:30"]
    assert [d[2] for d in find_dates("due 03/04/2025", day_first=True)] == ["2025-04-03"]
    assert [d[2] for d in find_dates("Time 20260106_13:00 and ref 20260106")] == ["2026-01-06 13:00"]


def test_one_day_in_three_spellings_is_one_entity():
    from minirag_core.extraction.offline_extractor import OfflineExtractor
    from minirag_core.graph.names import normalize_entity_name
    from minirag_core.types import Chunk

    texts = ["The bridge opened on March 3, 2025 after long delays.", "Crowds gathered on 3 March 2025 at dawn.",
             "Tolls started on 2025-03-03 for every car."]
    chunks = [Chunk(id=f"c{i}", doc_id=f"d{i}", order=1, text=t, n_tokens=0) for i, t in enumerate(texts)]
    results = OfflineExtractor(ner=False).extract(chunks)
    days = [{normalize_entity_name(e.name) for e in r.entities if e.type == "DATE AND TIME"} for r in results]
    assert days == [{"2025-03-03"}] * 3
