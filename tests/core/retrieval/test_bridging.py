"""Bridge entities: a chunk's subject read from the document's shape, the bridge spread over the
chunk-entity graph, and mini retrieval reaching a passage one entity away from the question."""

from __future__ import annotations

import networkx as nx

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.retrieval.extensions.bridge_arrays import bridges_over
from minirag_core.retrieval.extensions.bridging import bridge_scores
from minirag_core.extraction.subjects import title_subject
from minirag_core.storage.networkx_store import NetworkXGraphStore
from minirag_core.types import Document


def test_title_line_then_prose_names_the_subject():
    passage = "Harbour Lights (novel)\nHarbour Lights is a 1931 novel by an author who lived by the sea for years."
    assert title_subject(passage) == "Harbour Lights"
    assert title_subject("## Installing the agent\nRun the installer and follow the steps it shows you.") \
        == "Installing the agent"


def test_chat_prose_and_lists_have_no_subject():
    assert title_subject("Anna: are we still meeting today?\nBen: yes, at the station at five.") is None
    assert title_subject("This paragraph starts with a full sentence. It goes on for a while, as prose does.") is None
    assert title_subject("Shopping\neggs\nmilk\nbread") is None  # a list of short lines, not a passage
    assert title_subject("Only one line") is None


def test_offline_extractor_records_the_subject_of_a_document_start_only(embedder, tmp_path):
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, chunk_tokens=40, chunk_overlap=0)
    text = ("Ada Lovelace\nAda Lovelace was an English mathematician who wrote about the Analytical Engine. "
            + "She worked with Charles Babbage in London on his machine for many years. " * 6)
    index.insert([Document("p1", text)])
    chunks = index.graph_store.chunks(index.graph_store.chunk_ids())
    by_order = {attrs["order"]: attrs for attrs in chunks.values()}
    assert len(by_order) > 1
    assert by_order[0]["subjects"] and index.graph_store.entity(by_order[0]["subjects"][0])["name"] == "Ada Lovelace"
    assert all(not attrs.get("subjects") for order, attrs in by_order.items() if order > 0)


def _store(tmp_path) -> NetworkXGraphStore:
    """q mentions X; chunk b is about X and mentions Y; chunk c is about Y; d is unrelated."""
    store = NetworkXGraphStore(tmp_path / "g.json")
    g: nx.Graph = store.graph
    for chunk, subjects in {"a": [], "b": ["x"], "c": ["y"], "d": []}.items():
        g.add_node(chunk, kind="chunk", text=chunk, doc_id=chunk, order=0, n_tokens=1, subjects=subjects)
    for entity in ("x", "y", "z"):
        g.add_node(entity, kind="entity", name=entity, type="PERSON", description="", source_chunks=[])
    for chunk, entity in (("a", "x"), ("b", "x"), ("b", "y"), ("c", "y"), ("d", "z")):
        g.add_edge(chunk, entity, kind="mention", description="")
    return store


def test_bridge_reaches_chunks_about_mentioned_entities_step_by_step(tmp_path):
    store = _store(tmp_path)
    one_step, _ = bridge_scores(store, {"a": 1.0, "d": 0.1}, {}, seed_chunks=1, steps=1, damping=0.5)
    assert one_step == {"b": 0.5}
    two_steps, bridges = bridge_scores(store, {"a": 1.0, "d": 0.1}, {}, seed_chunks=1, steps=2, damping=0.5)
    assert two_steps == {"b": 0.5, "c": 0.25}  # a -> x -> b -> y -> c, damped each step
    assert {(b.source, b.entity, b.target) for b in bridges} == {("a", "x", "b"), ("b", "y", "c")}
    from_query, bridges = bridge_scores(store, {}, {"y": 0.9}, seed_chunks=1, steps=1, damping=0.5)
    assert from_query["c"] == 0.9 and ("y", "y", "c") in {(b.source, b.entity, b.target) for b in bridges}


def _topic_store(tmp_path) -> NetworkXGraphStore:
    """Chunks r0-r3 (relevant to the query) all mention the show s, which chunk "show" is about;
    o0-o3 (unrelated) all mention the place p, which chunk "place" is about; r0 mentions p too."""
    store = NetworkXGraphStore(tmp_path / "g.json")
    g: nx.Graph = store.graph
    chunks = {**{f"r{i}": [] for i in range(4)}, **{f"o{i}": [] for i in range(4)}, "show": ["s"], "place": ["p"]}
    chunks.update({f"x{i}": [] for i in range(20)})
    for chunk, subjects in chunks.items():
        g.add_node(chunk, kind="chunk", text=chunk, doc_id=chunk, order=0, n_tokens=1, subjects=subjects)
    for entity in ("s", "p"):
        g.add_node(entity, kind="entity", name=entity, type="CONCEPT", description="", source_chunks=[])
    for i in range(4):
        g.add_edge(f"r{i}", "s", kind="mention", description="")
        g.add_edge(f"o{i}", "p", kind="mention", description="")
    g.add_edge("r0", "p", kind="mention", description="")
    return store


def test_a_local_pool_undamps_entities_the_relevant_chunks_share(tmp_path):
    store = _topic_store(tmp_path)
    relevance = {"r0": 1.0, "r1": 0.9, "r2": 0.8, "r3": 0.7, **{f"o{i}": 0.1 for i in range(4)}}
    options = dict(seed_chunks=1, steps=1, damping=0.5, max_frontier=0, n_chunks=30, specificity_exponent=1.0)
    damped, _ = bridges_over(store, relevance, {}, **options)
    local, _ = bridges_over(store, relevance, {}, **options, local_pool=4)
    assert damped["show"] < 0.5 and damped["place"] < damped["show"]  # s in 4 chunks, p in 5: both hubs
    assert local["show"] == 0.5  # every chunk naming s is among the 4 most relevant: s is the query's topic
    assert damped["place"] < local["place"] < local["show"]  # p's mentions outside the pool still count
    assert bridges_over(store, relevance, {}, **options, local_pool=0)[0] == damped


PASSAGES = {
    "film": "The Quiet Orchard\nThe Quiet Orchard is a 1994 drama film directed by Tomasz Wierzbicki. "
            "It follows two sisters who inherit a failing apple farm in the hills.",
    "director": "Tomasz Wierzbicki\nTomasz Wierzbicki (1941 - 2012) was a painter and stage designer who "
                "grew up in Gdynia. He studied at the academy of fine arts before he turned to cinema.",
}
DISTRACTORS = [
    f"Person {i}\nPerson {i} was a director of documentary films who was born in the town of Place{i} "
    f"and made {i + 2} films about rivers and bridges." for i in range(12)
]


def test_mini_reaches_the_second_hop_and_explains_it(embedder, tmp_path):
    docs = [Document(k, v) for k, v in PASSAGES.items()]
    docs += [Document(f"other{i}", t) for i, t in enumerate(DISTRACTORS)]
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(docs)
    question = "In which city was the director of The Quiet Orchard born?"

    with_bridges = index.query(question, mode="mini", top_k=3)
    ids = [c.doc_id for c in with_bridges.chunks]
    assert "film" in ids and "director" in ids
    bridge_paths = [p for p in with_bridges.paths if p.query_entity.startswith("bridge from")]
    assert any(index.graph_store.entity(p.nodes[0])["name"] == "Tomasz Wierzbicki" for p in bridge_paths)
    assert "bridge from film" in {p.query_entity for p in bridge_paths}  # the document, never a chunk id
    chunk_ids = index.graph_store.chunk_ids()
    assert not any(c in p.query_entity or c in p.nodes for p in with_bridges.paths for c in chunk_ids)
    director = next(c for c in with_bridges.chunks if c.doc_id == "director")
    assert any(index.graph_store.entity(e)["name"] == "Tomasz Wierzbicki" for e in director.entities)

    without = index.query(question, mode="mini", top_k=3, bridge_weight=0.0)
    assert not any(p.query_entity.startswith("bridge from") for p in without.paths)
    naive = [c.doc_id for c in index.query(question, mode="naive", top_k=3).chunks]
    assert "director" not in naive  # the second hop shares few words with the question


def test_a_qualified_title_is_also_about_the_short_name_its_text_uses(embedder, tmp_path):
    from minirag_core.extraction.subjects import short_form

    assert short_form("Springfield, Ohio") == "Springfield" and short_form("Springfield") is None
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert([
        Document("town", "Greenvale, Oregon\nGreenvale is a small town in the valley, known for its orchards "
                         "and an annual harvest fair that draws visitors from the whole region."),
        Document("person", "Mara Quill\nMara Quill is a painter who was born in Greenvale and later moved "
                           "to the coast, where she opened a studio by the harbour."),
    ])
    store = index.graph_store
    about = store.subject_chunks(["GREENVALE", "GREENVALE, OREGON"])
    town_chunk = index._documents["town"]["chunks"][0] if hasattr(index, "_documents") else None
    assert set(about) == {"GREENVALE", "GREENVALE, OREGON"}
    assert about["GREENVALE"] == about["GREENVALE, OREGON"]
    if town_chunk:
        assert about["GREENVALE"] == [town_chunk]
    result = index.query("Which county is the birthplace of Mara Quill in?", mode="mini", top_k=2)
    assert {c.doc_id for c in result.chunks} == {"town", "person"}
    assert any("GREENVALE" in p.nodes for p in result.paths if p.query_entity.startswith("bridge"))
