"""What a chunk is embedded as: its text, plus only the entity descriptions that say more."""

from __future__ import annotations

from minirag_core.search.vectors import chunk_ranking_text

TEXT = ("Ada Lovelace wrote the notes.\n  She worked with   Charles Babbage. The engine was never built. Her notes "
        "ran to three times the length of the paper they translated, and showed step by step how the machine "
        "could compute a sequence of numbers, with loops and branches, long before any such machine existed.")
MARKDOWN = "## Install\n\nRun `pip install minirag` and then **index** a folder with the `minirag` command.\n"
CHAT = ("LiHua: Hey! I have arrived in the city, shall we grab lunch on the 8th?\nAdamSmith: Sure, see you then!\n"
        "LiHua: Great, the noodle place near the station?\nAdamSmith: Perfect, I will book a table for two at noon.")


def test_descriptions_quoting_the_chunk_add_nothing() -> None:
    quoted = ["Ada Lovelace wrote the notes. She worked with Charles Babbage.",  # two sentences, whitespace aside
              "She worked with Charles Babbage. The engine was ne…",  # trimmed by the extractor
              "Charles Babbage",
              "She worked with Charles Babbage. | The engine was never built."]  # two records of one entity
    assert chunk_ranking_text(TEXT, quoted) == TEXT
    assert chunk_ranking_text(MARKDOWN, ["Run pip install minirag and then index a folder with the minirag command."]
                              ) == MARKDOWN  # markup aside
    assert chunk_ranking_text(MARKDOWN, ["Run pip install minirag and then index a fo…"]) == MARKDOWN  # cut short


def test_descriptions_that_say_more_are_appended_once() -> None:
    new = "A model's summary: the first published algorithm."
    partly = "The engine was never built. | It was designed in 1837 by the English polymath in London."
    assert chunk_ranking_text(TEXT, [new, "", new, partly, "Charles Babbage"]) == f"{TEXT}\n{new}\n{partly}"
    assert chunk_ranking_text(TEXT, ["Ada wrote"]) == f"{TEXT}\nAda wrote"  # words, not a run of them
    labelled = "Li Hua: Hey! I have arrived in the city, shall we grab lunch on the 8th?"
    assert chunk_ranking_text(CHAT, [labelled]) == f"{CHAT}\n{labelled}"  # it names the speaker as the chunk does not


def test_a_description_of_quotes_cut_short_adds_nothing() -> None:
    cut = "Ada Lovelace wrote the no… She worked with Charles Babbage. The engine was nev…"  # two cut sentences
    assert chunk_ranking_text(TEXT, [cut]) == TEXT
    assert chunk_ranking_text(TEXT, ["Ada Lovelace wrote the no… It ran on punched cards."]) == (
        f"{TEXT}\nAda Lovelace wrote the no… It ran on punched cards.")  # the second sentence is new


def test_descriptions_add_at_most_a_share_of_the_chunk_cut_at_a_word() -> None:
    from minirag_core.search.vectors import RANKING_EXTRA_SHARE

    lines = [f"Speaker {i}: a remark number {i} about the engine and its cards." for i in range(40)]
    ranked = chunk_ranking_text(TEXT, lines)
    extra, bound = ranked[len(TEXT) + 1:], RANKING_EXTRA_SHARE * len(TEXT)
    assert ranked.startswith(TEXT + "\n") and bound - 15 < len(extra) <= bound
    assert "\n".join(lines).startswith(extra) and "\n".join(lines)[len(extra)] in " \n"  # whole words only


def test_blank_or_unbounded_descriptions_do_not_break_the_bound(monkeypatch) -> None:
    from minirag_core.search import vectors

    assert chunk_ranking_text(TEXT, [" " * 400]) == TEXT  # only blanks: nothing to add
    monkeypatch.setattr(vectors, "RANKING_EXTRA_SHARE", float("inf"))
    lines = [f"Speaker {i}: a remark number {i} about the engine and its cards." for i in range(40)]
    assert chunk_ranking_text(TEXT, lines) == TEXT + "\n" + "\n".join(lines)
