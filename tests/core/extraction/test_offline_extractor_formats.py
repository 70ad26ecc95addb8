"""The offline extractor on text that is not a chat log: an encyclopedic passage, technical
documentation (a README with a licence) and news prose, with hand-written expectations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import REPO

from minirag_core.extraction.formats import CHAT, ENCYCLOPEDIC, MARKDOWN, PROSE, detect_format, prose_lines
from minirag_core.extraction.offline_extractor import OfflineExtractor
from minirag_core.extraction.spans import find_dates
from minirag_core.graph.names import normalize_entity_name
from minirag_core.types import Chunk
from minirag_core.search.vectors import relation_has_meaning

WIKI = Path(os.environ.get("MINIRAG_DATA_ROOT") or REPO.parent / "shared" / "data") / "hotpotqa_100" / "corpus.json"

README = """# fastgrep

fastgrep is a command-line search tool written in Rust. It was created by Maria Keller at the
University of Zurich and is maintained by the Open Source Initiative.

## Installation

Install it with Cargo:

```
cargo install fastgrep
```

Warning: the Windows build needs Visual Studio 2022.
Example: fastgrep -r pattern src/

## License

Copyright (c) 2021 Maria Keller. Permission is hereby granted, free of charge, to any person
obtaining a copy of this software, to deal in the Software without restriction. The software was
first released in Berlin on 4 May 2021.
"""

NEWS = """Northwind Films signs veteran director

LOS ANGELES, June 12 (Staff report) - Carla Mendes directed The Silent Harbor, the studio said on
Monday. Northwind Films, which is based in Toronto, hired Mendes after her work with Paramount
Pictures. The film was shot in Lisbon and Porto, Portugal, and will premiere at the Venice Film
Festival. "We are thrilled," said Daniel Okafor, chief executive of Northwind Films.
"""

CHAT_LOG = """Time: 2024-03-01 10:00
Anna: are we still meeting at the library today?
Ben: yes, at five. Bring the notes from Tuesday.
Anna: great, see you there!
Ben: see you!
"""


def _passages() -> dict[str, str]:
    return {d["id"]: d["text"] for d in json.loads(WIKI.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def results(embedder):
    texts = {"readme": README, "news": NEWS}
    if WIKI.exists():
        passages = _passages()
        texts["bio"] = passages["David Smith (director)"]
        texts["film"] = passages["Laloorinu Parayanullathu"]
    extractor = OfflineExtractor(embedder)
    chunks = [Chunk(id=k, doc_id=k, order=0, text=t, n_tokens=0) for k, t in texts.items()]
    return dict(zip(texts, extractor.extract(chunks)))


def _types(result) -> dict[str, str]:
    return {e.name: e.type for e in result.entities}


def _relation(result, a: str, b: str):
    want = {normalize_entity_name(a), normalize_entity_name(b)}
    return next((r for r in result.relations
                 if {normalize_entity_name(r.source), normalize_entity_name(r.target)} == want), None)


def test_formats_are_read_from_the_shape():
    assert detect_format(CHAT_LOG) == CHAT
    assert detect_format(README) == MARKDOWN
    assert detect_format(NEWS) == ENCYCLOPEDIC  # a headline line, then prose
    assert detect_format("The committee met twice. Warning: the minutes are late.\nNote: see below.") == PROSE
    # label lines are not chat turns, however many there are
    assert detect_format("Warning: hot surface.\nExample: run it twice.\nWarning: unplug first.\n"
                         "Example: press the button.") != CHAT
    lines = prose_lines(README, MARKDOWN)
    assert "cargo install fastgrep" not in lines  # fenced code is skipped
    assert any(line.startswith("fastgrep is a command-line search tool") and "Open Source Initiative" in line
               for line in lines)  # hard-wrapped lines joined into one paragraph


@pytest.mark.skipif(not WIKI.exists(), reason="encyclopedic passages not available")
def test_encyclopedic_passage(results):
    bio = _types(results["bio"])
    assert bio["David Smith"] == "PERSON" and bio["Albert E. Smith"] == "PERSON"
    # the recogniser's places stand where the classifier agrees or a rule does; else they stay untyped
    assert bio["Santa Barbara"] == "LOCATION" and bio["California"] == "LOCATION"
    assert bio["Faversham"] in ("LOCATION", "UNKNOWN")
    assert bio["Vitagraph Studios"] == "ORGANIZATION"
    assert results["bio"].subject_entities == ["David Smith"]
    film = results["film"]
    assert _types(film)["Sathish Kalathil"] == "PERSON"
    rel = _relation(film, "Sathish Kalathil", "Laloorinu Parayanullathu")
    assert rel is not None and "directed" in rel.keywords.split(", ")
    assert "is an Indian documentary film directed by Sathish Kalathil" in rel.description
    assert rel.source == "Sathish Kalathil"  # the actor of "directed by" comes first


def test_technical_documentation(results):
    readme = results["readme"]
    types = _types(readme)
    assert types["Maria Keller"] == "PERSON"
    assert types["University of Zurich"] == "ORGANIZATION"
    # the recogniser says ORG, the classifier prefers another type: right or absent
    assert types["Open Source Initiative"] in ("ORGANIZATION", "UNKNOWN")
    assert types["Berlin"] == "LOCATION"
    assert types["2021-05-04"] == "DATE AND TIME"  # "4 May 2021", named canonically
    for label in ("Warning", "Example", "License", "Installation"):
        assert types.get(label) != "PERSON", label  # labels and headings are not speakers
    rel = _relation(readme, "Maria Keller", "University of Zurich")
    assert rel is not None and rel.keywords.startswith("created")
    assert readme.subject_entities == ["fastgrep"]


def test_news_prose(results):
    news = results["news"]
    types = _types(news)
    for person in ("Carla Mendes", "Daniel Okafor"):
        assert types[person] == "PERSON", person
    for org in ("Northwind Films", "Paramount Pictures"):
        assert types[org] == "ORGANIZATION", org
    for place in ("Toronto", "Lisbon", "Portugal"):
        assert types[place] == "LOCATION", place
    assert "Mendes" not in types  # the surname alone is the person named in full in the chunk
    rel = _relation(news, "Carla Mendes", "Silent Harbor")
    assert rel is not None and rel.keywords.split(", ")[0] == "directed"
    assert "Carla Mendes directed The Silent Harbor" in rel.description
    hired = _relation(news, "Northwind Films", "Carla Mendes")
    assert hired is not None and "hired" in hired.keywords  # reached through the surname alias
    based = _relation(news, "Northwind Films", "Toronto")
    assert based is not None and "based in" in based.keywords


def test_meaningful_relations_get_vectors_cooccurrence_does_not(results):
    news = results["news"]
    linked = [r for r in news.relations if relation_has_meaning(r.keywords)]
    bare = [r for r in news.relations if not relation_has_meaning(r.keywords)]
    assert linked and bare
    assert min(r.weight for r in linked) > max(r.weight for r in bare if r.keywords == "co-occurrence") / 2
    assert all(r.keywords == "co-occurrence" for r in bare)


def test_chat_speakers_stay_people(embedder):
    (res,) = OfflineExtractor(embedder).extract([Chunk(id="c", doc_id="d", order=0, text=CHAT_LOG, n_tokens=0)])
    types = _types(res)
    assert types["Anna"] == "PERSON" and types["Ben"] == "PERSON"
    assert types["2024-03-01_10:00"] == "DATE AND TIME"
    assert "conversation" in _relation(res, "Anna", "Ben").keywords


def test_bare_numbers_are_dates_only_in_a_timestamp_context():
    assert [d[2] for d in find_dates("Order 20240105 shipped; the call is on 20240105 at 20240105_09:30.")] == [
        "2024-01-05", "2024-01-05 09:30"]
    assert find_dates("Invoice 20241399 was paid.") == []
