"""A session never sends a line twice in full, and loses none (``retrieval/session_text.py``)."""

from __future__ import annotations

import re

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.session import MiniRAGSession
from minirag_core.retrieval.session_text import SentLines, repeat_marker
from minirag_core.types import Document

FOOTER = ("Warranty: this appliance is covered for two years from the date of purchase.\n"
          "Return the appliance to the shop where you bought it, together with the receipt.\n"
          "\n"
          "Do not open the casing: there are no user-serviceable parts inside.")
DOCS = [
    Document("kettle", "The Brightwater kettle boils a litre of water in three minutes.\n"
                       "It switches itself off when the water boils.\n" + FOOTER),
    Document("toaster", "The Brightwater toaster browns four slices of bread at once.\n"
                        "Its crumb tray slides out for cleaning.\n" + FOOTER),
    Document("garden", "Tomatoes grow best in full sun and need watering every morning in summer."),
]
QUESTIONS = ["How long does the Brightwater kettle take to boil a litre of water?",
             "How many slices of bread does the Brightwater toaster brown at once?"]
_MARKER = re.compile(r"^\[\d+ lines? as in passage \d+ above\]$")


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.split("\n") if line.strip() and not _MARKER.match(line.strip())}


def test_a_block_of_lines_sent_before_becomes_a_marker_naming_its_passage() -> None:
    sent = SentLines()
    first = "intro line of the first page\n" + FOOTER
    assert sent.shown(first) == first  # nothing sent yet
    sent.add(first, 1)
    second = "another page opens differently\n" + FOOTER + "\nand closes with its own line"
    shown = sent.shown(second)
    assert shown == "another page opens differently\n" + repeat_marker(1, 3) + "\nand closes with its own line"
    assert repeat_marker(1, 3) == "[3 lines as in passage 1 above]"
    sent.add(shown, 2)
    # a short repeated line costs about what its marker would: it stays
    assert sent.shown("intro line of the first page") == "intro line of the first page"
    # the same lines in another order are two blocks; indented otherwise, they are not the lines sent before
    footer = FOOTER.split("\n")
    assert sent.shown("\n".join([footer[3], footer[0]])) == repeat_marker(1, 1) + "\n" + repeat_marker(1, 1)
    assert repeat_marker(1, 1) == "[1 line as in passage 1 above]"
    indented = "\n".join("    " + line for line in footer)
    assert sent.shown(indented) == indented
    # passage 2 sent the footer as a marker: only passage 1 is ever named for it
    assert sent.shown(FOOTER) == repeat_marker(1, 3)
    sent.forget({2})
    assert sent.shown(FOOTER) == FOOTER  # passage 1 forgotten: the block goes in full again


def test_a_block_repeated_inside_one_passage_stays() -> None:
    text = FOOTER + "\n" + FOOTER
    assert SentLines().shown(text) == text


def test_what_a_sequence_of_passages_sends_holds_every_line_and_names_whole_blocks() -> None:
    texts = ["alpha line that opens the first passage\n" + FOOTER, FOOTER + "\nbeta line closing the second passage",
             "gamma line\n" + FOOTER.upper() + "\n" + FOOTER, "beta line closing the second passage\n" + FOOTER]
    sent, shown = SentLines(), {}
    for number, text in enumerate(texts, start=1):
        shown[number] = sent.shown(text)
        sent.add(shown[number], number)
    assert set().union(*map(_lines, shown.values())) == set().union(*map(_lines, texts))  # nothing lost
    for number, text in shown.items():  # every marker names an earlier passage that sent its block in full
        for marker in (line for line in text.split("\n") if _MARKER.match(line)):
            assert int(re.findall(r"\d+", marker)[1]) == 1
    assert shown[4] == "beta line closing the second passage\n" + repeat_marker(1, 3)
    assert "\n".join(shown.values()).count(FOOTER.split("\n")[0]) == 1


@pytest.fixture(scope="module")
def index(embedder) -> MiniRAGIndex:
    index = MiniRAGIndex(None, embedder=embedder, workers=1)
    index.insert(DOCS)
    return index


def _session_contexts(session: MiniRAGSession) -> tuple[str, list]:
    turns = [session.query(q, top_k=2) for q in QUESTIONS]
    return "\n".join(t.to_context() for t in turns), turns


def test_a_session_sends_shared_lines_once_and_loses_no_line(index: MiniRAGIndex) -> None:
    contexts, turns = _session_contexts(index.session(admit_ratio=None))
    sent = {c.chunk_id: c.text for t in turns for c in t.result.chunks if c.chunk_id in t.new}
    assert {c.doc_id for t in turns for c in t.result.chunks if c.chunk_id in t.new} >= {"kettle", "toaster"}
    for line in _lines(FOOTER):
        assert contexts.count(line) == 1  # the footer both pages end with is sent once
    assert all(line in contexts for line in set().union(*map(_lines, sent.values())))  # every line sent
    assert re.search(r"\[\d+ lines? as in passage \d+ above\]", contexts)
    plain_session = index.session(admit_ratio=None, skip_repeated_lines=False)
    plain, _ = _session_contexts(plain_session)
    assert plain.count(FOOTER.split("\n")[0]) == 2
    assert plain_session.sent_lines.passages == {}  # nothing recorded when nothing is skipped
    assert index.embedder.count_tokens(contexts) < index.embedder.count_tokens(plain)


def test_an_adapters_view_shows_the_same_text(index: MiniRAGIndex) -> None:
    _, turns = _session_contexts(index.session(admit_ratio=None))
    shown = [c.text for t in turns for c in t.shown_result().chunks]
    assert sum(FOOTER.split("\n")[0] in text for text in shown) == 1
    assert any(" lines as in passage " in text for text in shown)


def test_the_lines_sent_survive_a_json_round_trip(index: MiniRAGIndex) -> None:
    session = index.session(admit_ratio=None)
    assert [c.doc_id for c in session.query(QUESTIONS[0], top_k=1).result.chunks] == ["kettle"]
    restored = MiniRAGSession.from_json(index, session.to_json())
    assert restored.sent_lines.passages == session.sent_lines.passages and restored.skip_repeated_lines
    assert "Warranty" not in session.to_json()  # hashes, not text
    follow_up = restored.query(QUESTIONS[1], top_k=1)
    assert " lines as in passage 1 above]" in follow_up.to_context()
