"""OfflineQueryMapper on LiHuaWorld dev questions."""

from __future__ import annotations

from conftest import LIHUAWORLD

import asyncio
import json

import pytest

from minirag_core.extraction.base import QueryMapper
from minirag_core.extraction.entity_typing import TYPE_POOL
from minirag_core.retrieval.query.entities import extract_query_entities
from minirag_core.retrieval.query.offline_mapping import OfflineQueryMapper

QA = LIHUAWORLD / "qa_dev.json"
#: a type pool holding every type (answer types come only from the graph's pool)
ALL_TYPES = {t: ["example"] for t in TYPE_POOL}


@pytest.fixture(scope="module")
def mapper():
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    return OfflineQueryMapper(SentenceTransformerEmbedder())


@pytest.fixture(scope="module")
def questions() -> dict[int, str]:
    if not QA.exists():
        pytest.skip("qa_dev.json not available")
    return {q["id"]: q["question"] for q in json.loads(QA.read_text(encoding="utf-8"))}


def test_protocol(mapper):
    assert isinstance(mapper, QueryMapper)


def test_when_question(mapper, questions):
    q = questions[63]  # When was the first time Li Hua had dinner with Wolfgang this year?
    m = mapper.map_query(q, ALL_TYPES)
    assert m.source == "offline"
    assert m.entities[:2] == ["Li Hua", "Wolfgang"]
    assert m.answer_types[0] == "DATE AND TIME" and len(m.answer_types) <= 3


def test_when_question_with_date(mapper, questions):
    m = mapper.map_query(questions[69], ALL_TYPES)  # What does Li Hua report to Adam on January 6th?
    assert m.entities == ["Li Hua", "Adam", "January 6"]
    assert mapper.map_query(questions[114], ALL_TYPES).answer_types[0] == "DATE AND TIME"


def test_who_question(mapper, questions):
    m = mapper.map_query(questions[112], ALL_TYPES)  # Who invites Li Hua to join the community bake sale?
    assert m.entities == ["Li Hua", "community bake sale"]
    assert m.answer_types[0] == "PERSON"


def test_where_question(mapper):
    m = mapper.map_query("Where do Li Hua and WolfgangSchulz meet for the photo exhibition?", ALL_TYPES)
    assert m.entities == ["Li Hua", "Wolfgang Schulz", "photo exhibition"]
    assert m.answer_types[0] == "LOCATION"


def test_quoted_title_and_song_type(mapper, questions):
    m = mapper.map_query(questions[10], ALL_TYPES)
    assert m.entities[:2] == ["Viva la Vida", "Wolfgang Schulz"]
    assert "this Sunday" in m.entities
    m = mapper.map_query(questions[125], ALL_TYPES)  # What song does Li Hua suggest ... on 20260405?
    assert m.answer_types[0] == "WORK OF ART"
    assert "2026-04-05" in m.entities and "jam session" in m.entities


def test_noun_phrases_when_no_names(mapper, questions):
    m = mapper.map_query(questions[110], ALL_TYPES)  # What time is the power outage in the neighborhood?
    assert m.entities == ["power outage", "neighborhood"]
    assert m.answer_types[0] == "DATE AND TIME"


def test_types_restricted_to_pool(mapper, questions):
    pool = {"PERSON": ["Li Hua"], "LOCATION": ["Barcelona"], "SONG": ["Hey Jude"]}
    m = mapper.map_query(questions[125], pool)
    assert m.answer_types == []  # WORK OF ART is not held: no stand-in from the pool
    m = mapper.map_query(questions[63], {"PERSON": [], "DATE AND TIME": []})
    assert m.answer_types[0] == "DATE AND TIME" and set(m.answer_types) <= {"PERSON", "DATE AND TIME"}


def test_async(mapper, questions):
    m = asyncio.run(mapper.amap_query(questions[63], ALL_TYPES))
    assert m.answer_types[0] == "DATE AND TIME"


def test_all_dev_questions_map(mapper, questions):
    n_with_entities = 0
    for q in questions.values():
        ents = extract_query_entities(q)
        n_with_entities += bool(ents)
        assert all(e and e == e.strip() for e in ents)
    assert n_with_entities >= 0.95 * len(questions)


def test_an_entity_naming_a_node_is_not_embedded_again(embedder, tmp_path, monkeypatch) -> None:
    """The mapper embeds nothing; a mini query encodes the question and the query entities naming
    no entity node in one encoder call, while one naming a node takes that node's stored vector;
    the seeds equal those that embedding the entity gives (the embedder ignores case)."""
    import numpy as np

    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.graph.names import normalize_entity_name
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.retrieval.query.seeds import select_seeds
    from minirag_core.types import Document

    fresh = SentenceTransformerEmbedder()
    index = MiniRAGIndex(tmp_path / "wd", embedder=fresh)
    index.insert([Document("d1", "Marta Olsen repaired the brass telescope on the north pier of Halden harbour."),
                  Document("d2", "The north pier of Halden harbour was rebuilt by Jonas Berg after the storm.")])
    sources = index.sources
    assert sources.graph.entity("MARTA OLSEN") is not None
    calls: list[list[str]] = []
    original = fresh._encode
    monkeypatch.setattr(fresh, "_encode", lambda texts: calls.append(list(texts)) or original(texts))
    question = "What did marta olsen repair near the lighthouse of Vardo?"
    mapping = index.map_query(question)
    assert calls == [] and mapping.entities
    result = index.query(question, mode="mini")
    unnamed = [e for e in result.mapping.entities if sources.graph.entity(normalize_entity_name(e)) is None]
    assert unnamed and len(unnamed) < len(result.mapping.entities)
    assert calls == [[question, *unnamed]]  # one pass; the named entities are not in it
    assert result.seeds["MARTA OLSEN"] == 1.0
    calls.clear()
    entities = ["marta olsen", "Vardo lighthouse"]
    seeds = select_seeds(sources, entities, top_k=5, min_similarity=0.3)
    assert calls == [["Vardo lighthouse"]]  # the named one came from the stored vectors
    assert seeds["marta olsen"]["MARTA OLSEN"] == 1.0
    # the same seeds as embedding every entity now
    monkeypatch.setattr(type(sources), "entity_vectors", lambda self, ids: {})
    fresh._cache._data.clear()
    again = select_seeds(sources, entities, top_k=5, min_similarity=0.3)
    assert again.keys() == seeds.keys()
    for entity in seeds:
        assert seeds[entity].keys() == again[entity].keys()
        assert np.allclose(list(seeds[entity].values()), [again[entity][k] for k in seeds[entity]], atol=1e-3)


def test_a_long_question_is_encoded_once_per_query(embedder, tmp_path, monkeypatch) -> None:
    """A question past the embedder's short-text cache is embedded by the offline mapper and its
    vector reused for the answer types and the chunk scores (not encoded three times); the
    vector stays out of ``to_dict``, which remains JSON."""
    import json

    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document

    fresh = SentenceTransformerEmbedder()  # its own cache: the session embedder's may hold the question
    index = MiniRAGIndex(tmp_path / "wd", embedder=fresh)
    index.insert([Document("d1", "Marta Olsen repaired the brass telescope on the north pier of Halden harbour."),
                  Document("d2", "The north pier of Halden harbour was rebuilt by Jonas Berg after the storm.")])
    question = ("After the long winter storm that damaged most of the harbour, and before the summer regatta "
                "opened, who was it that repaired the old brass telescope standing on the north pier of "
                "Halden harbour, and who had rebuilt that pier?")
    assert len(question) > 200
    encoded: list[str] = []
    original = fresh._encode
    monkeypatch.setattr(fresh, "_encode", lambda texts: encoded.extend(texts) or original(texts))
    for mode in ("mini", "light"):
        encoded.clear()
        result = index.query(question, mode=mode)
        assert encoded.count(question) == 1, mode
        assert result.chunks
        data = result.to_dict()
        assert set(data["mapping"]) == {"entities", "answer_types", "source"}
        json.dumps(data)
        assert result.mapping.query_vector is not None  # the object keeps it
    other = result.mapping
    assert other.vector_for(fresh.name) is other.query_vector and other.vector_for("another model") is None
    other.vector_model = ""  # an embedder without a name: never reused
    assert other.vector_for("") is None


def test_mini_finds_the_seeds_beside_the_question_encoding(embedder, tmp_path, monkeypatch) -> None:
    """With a spare core and every query entity naming a node (nothing to embed but the question),
    the graph half (seeds, subgraph, key edges, paths, the chunks' graph term) runs in a worker thread
    while the question is encoded; the result is the one the serial order gives. A query entity to embed keeps all in line (its vector
    comes from the question's encoder pass)."""
    import threading

    import minirag_core.concurrency as concurrency
    import minirag_core.retrieval.modes.mini_graph as mini_graph
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document

    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert([Document("d1", "Marta Olsen repaired the brass telescope on the north pier of Halden harbour."),
                  Document("d2", "The north pier of Halden harbour was rebuilt by Jonas Berg after the storm."),
                  Document("d3", "Jonas Berg trained as a shipwright in Bergen before he moved to Halden.")])
    threads: list[int] = []
    select = mini_graph.select_seeds
    monkeypatch.setattr(mini_graph, "select_seeds",
                        lambda *a, **k: threads.append(threading.get_ident()) or select(*a, **k))
    results = {}
    for spare in (True, False):
        monkeypatch.setattr(concurrency, "spare_core", lambda spare=spare: spare)
        threads.clear()
        results[spare] = index.query("Where did Jonas Berg train?", mode="mini")
        assert threads and (threads[0] != threading.get_ident()) == spare
    assert results[True].seeds and results[True].to_dict() == results[False].to_dict()
    monkeypatch.setattr(concurrency, "spare_core", lambda: True)
    # the chunk count the worker assumed is checked against the dense scores: a wrong one is redone
    monkeypatch.setattr(type(index.sources), "dense_score_count", lambda self: 1)
    threads.clear()
    again = index.query("Where did Jonas Berg train?", mode="mini")
    assert len(threads) == 2 and again.to_dict() == results[False].to_dict()
    monkeypatch.undo()
    monkeypatch.setattr(mini_graph, "select_seeds",
                        lambda *a, **k: threads.append(threading.get_ident()) or select(*a, **k))
    monkeypatch.setattr(concurrency, "spare_core", lambda: True)
    threads.clear()
    unnamed = index.query("Who rebuilt the pier where Marta Olsen repaired the Vardo lighthouse?", mode="mini")
    assert unnamed.seeds and threads == [threading.get_ident()]
