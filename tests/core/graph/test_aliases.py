"""Alias consolidation across documents: short forms join the one full name they abbreviate,
ambiguous ones stay apart, and deleting a document leaves the graph of a build without it."""

from __future__ import annotations

import re

from minirag_core.graph.aliases import full_form, short_form
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document, ExtractedEntity, ExtractedRelation, ExtractionResult
import pytest

from minirag_core.storage.graph_stores import whole_graph
from index_state import _assert_same_vectors, _graph_state, _vector_state

_PERSON = re.compile(r"\[([^\]]+)\]")  # [Name] is a person, {Name} a place
_PLACE = re.compile(r"\{([^}]+)\}")


class BracketExtractor:
    """Scripted stand-in: persons in [brackets], places in {braces}, every pair related."""

    name = "brackets:v1"

    def extract(self, chunks, *, show_progress=False):
        out = []
        for chunk in chunks:
            ents = [ExtractedEntity(n, "PERSON", chunk.text) for n in _PERSON.findall(chunk.text)]
            ents += [ExtractedEntity(n, "LOCATION", chunk.text) for n in _PLACE.findall(chunk.text)]
            rels = [ExtractedRelation(a.name, b.name, chunk.text, "met at", 1.0)
                    for i, a in enumerate(ents) for b in ents[i + 1:]]
            out.append(ExtractionResult(entities=ents, relations=rels, subject_entities=[e.name for e in ents[:1]]))
        return out

    async def aextract(self, chunks, *, show_progress=False):
        return self.extract(chunks)


@pytest.fixture(params=["networkx", "sqlite"])
def backend(request) -> str:
    """Both embedded stores consolidate aliases alike."""
    return request.param


def _index(path, embedder, docs, backend):
    index = MiniRAGIndex(path, embedder=embedder, extractor=BracketExtractor(), graph_backend=backend)
    index.insert(docs)
    return index


def _doc(i: str, text: str) -> Document:
    return Document(id=i, text=text, metadata={})


def test_short_and_full_forms():
    assert short_form("VASQUEZ") == ((), "VASQUEZ")
    assert short_form("H. VASQUEZ") == (("H",), "VASQUEZ")
    assert short_form("HENRIETTA VASQUEZ") is None
    assert full_form("HENRIETTA VASQUEZ") == "VASQUEZ" and full_form("H. VASQUEZ") is None
    assert full_form("VASQUEZ") is None


def test_short_forms_join_the_one_full_name(tmp_path, embedder, backend):
    docs = [_doc("a", "[Henrietta Vasquez] opened the archive in {Harwick}."),
            _doc("b", "[Vasquez's] notes were read aloud in {Dunmore}."),
            _doc("c", "Letters from [H. Vasquez] reached {Harwick}."),
            _doc("d", "[Vasquez] wrote again.")]
    index = _index(tmp_path / "wd", embedder, docs, backend)
    g = whole_graph(index.graph_store)
    assert not g.has_node("VASQUEZ") and not g.has_node("H. VASQUEZ") and not g.has_node("VASQUEZS")
    node = index.graph_store.entity("HENRIETTA VASQUEZ")
    assert node["name"] == "Henrietta Vasquez" and node["type"] == "PERSON"
    assert len(node["source_chunks"]) == 4
    assert g.has_edge("DUNMORE", "HENRIETTA VASQUEZ")  # the relation follows the alias
    records = {r.get("raw") for r in g.nodes["HENRIETTA VASQUEZ"]["sources"].values()}
    assert records == {None, "VASQUEZ", "H. VASQUEZ"}  # recorded per source
    subjects = {c: g.nodes[c]["subjects"] for c in g.nodes if g.nodes[c].get("kind") == "chunk"}
    assert all(s == ["HENRIETTA VASQUEZ"] for s in subjects.values())


def test_ambiguous_short_forms_stay_apart(tmp_path, embedder, backend):
    docs = [_doc("a", "[John Smith] sailed from {Harwick}."),
            _doc("b", "[Jane Smith] stayed in {Dunmore}."),
            _doc("c", "[Smith] wrote to the harbour office."),
            _doc("d", "[J. Smith] signed the log.")]
    g = whole_graph(_index(tmp_path / "wd", embedder, docs, backend).graph_store)
    assert g.has_node("SMITH") and g.has_node("J. SMITH")
    assert not g.has_edge("SMITH", "JOHN SMITH") and not g.has_edge("SMITH", "JANE SMITH")
    assert len(g.nodes["JOHN SMITH"]["sources"]) == 1 and len(g.nodes["JANE SMITH"]["sources"]) == 1


def test_deleting_the_full_name_equals_a_build_without_it(tmp_path, embedder, backend):
    docs = [_doc("a", "[Henrietta Vasquez] opened the archive in {Harwick}."),
            _doc("b", "[Vasquez] read the notes in {Dunmore}."),
            _doc("c", "[Marta Lind] and [Vasquez] met in {Harwick}."),
            _doc("d", "[Lind] left {Dunmore}.")]
    index = _index(tmp_path / "wd", embedder, docs, backend)
    assert not whole_graph(index.graph_store).has_node("VASQUEZ")
    index.delete("a")
    fresh = _index(tmp_path / "fresh", embedder, docs[1:], backend)
    assert whole_graph(index.graph_store).has_node("VASQUEZ")
    assert _graph_state(index) == _graph_state(fresh)
    _assert_same_vectors(_vector_state(index), _vector_state(fresh))
    # and back: inserting it again gives the build with every document, in any order
    index.insert([docs[0]])
    reverse = _index(tmp_path / "reverse", embedder, docs[::-1], backend)
    assert _graph_state(index) == _graph_state(reverse)
    _assert_same_vectors(_vector_state(index), _vector_state(reverse))
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=BracketExtractor())
    assert _graph_state(reopened) == _graph_state(index)  # the change log replays the moves


def test_a_second_full_name_splits_an_alias_off_again(tmp_path, embedder, backend):
    docs = [_doc("a", "[John Smith] sailed from {Harwick}."), _doc("c", "[Smith] wrote to {Dunmore}.")]
    index = _index(tmp_path / "wd", embedder, docs, backend)
    assert whole_graph(index.graph_store).has_edge("DUNMORE", "JOHN SMITH")
    index.insert([_doc("b", "[Jane Smith] stayed in {Dunmore}.")])
    fresh = _index(tmp_path / "fresh", embedder, [*docs, _doc("b", "[Jane Smith] stayed in {Dunmore}.")], backend)
    assert whole_graph(index.graph_store).has_edge("DUNMORE", "SMITH")
    assert _graph_state(index) == _graph_state(fresh)


def test_a_chunk_naming_both_forms_keeps_its_own_split(tmp_path, embedder, backend):
    """Whether a chunk's own mentions are one person is the extractor's call, not the graph's."""
    g = whole_graph(_index(tmp_path / "wd", embedder, [_doc("a", "[Smith] and [John Smith] spoke.")], backend).graph_store)
    assert g.has_node("SMITH") and g.has_edge("SMITH", "JOHN SMITH")


def test_one_document_at_a_time_in_any_order_equals_a_one_shot_build(tmp_path, embedder, backend):
    """A write homes all the short forms of a surname only when it touches a full name of that
    surname, else only its own records: the graph is still the one-shot build's."""
    docs = [_doc("a", "[Henrietta Vasquez] opened the archive in {Harwick}."),
            _doc("b", "[Vasquez] read the notes in {Dunmore}."),
            _doc("c", "[H. Vasquez] and [Marta Lind] met in {Harwick}."),
            _doc("d", "[Lind] left {Dunmore}."),
            _doc("e", "[Vasquez] wrote to [Lind] from {Dunmore}."),
            _doc("f", "[Marta Lind] returned to {Harwick}.")]
    second_full_name = _doc("g", "[Hector Vasquez] sailed from {Dunmore}.")
    whole = _graph_state(_index(tmp_path / "whole", embedder, docs, backend))
    orders = [docs, docs[::-1], [docs[i] for i in (1, 4, 0, 3, 5, 2)]]
    for k, order in enumerate(orders):
        index = MiniRAGIndex(tmp_path / f"one-{k}", embedder=embedder, extractor=BracketExtractor(),
                             graph_backend=backend)
        for doc in order:
            index.insert([doc])
        assert _graph_state(index) == whole, k
    assert whole_graph(index.graph_store).has_edge("DUNMORE", "HENRIETTA VASQUEZ")  # b and e homed
    index.insert([second_full_name])  # now "Vasquez" is ambiguous: every short form goes back
    assert _graph_state(index) == _graph_state(_index(tmp_path / "all", embedder, [*docs, second_full_name], backend))
    index.delete("g")
    assert _graph_state(index) == whole


def test_a_common_surname_written_in_any_order_equals_a_one_shot_build(tmp_path, embedder, backend):
    """Many people share a surname: a write re-homes only the short forms whose full-name match
    it changes from or to a single one (``_Homes``), yet every order of inserts and deletes gives
    the one-shot build's graph. The texts cover a first full name, a second with the same and
    with another initial, a third (two matches to three: nothing moves), a type change, a chunk
    naming two short forms, and one naming a full name beside its short form."""
    import random

    texts = ["[Ada Kell] ran the mill in {Orby}.", "[Kell] fixed the wheel in {Orby}.",
             "[A. Kell] wrote from {Tarn}.", "[Alan Kell] sold grain in {Tarn}.",
             "[Bea Kell] kept the books.", "[B. Kell] and [A. Kell] argued in {Orby}.",
             "[Kell] left {Tarn}.", "[Bo Kell] and [B. Kell] met in {Orby}.",
             "[A. B. Kell] signed the deed.", "[Ada Bea Kell] signed at {Orby}.",
             "{Kell} is a hamlet near {Tarn}.", "[Cy Kell] came to {Orby}; [C. Kell] stayed."]
    docs = [_doc(f"d{i:02d}", t) for i, t in enumerate(texts)]
    rng = random.Random(7)
    for trial in range(3):
        order = docs[:]
        rng.shuffle(order)
        index = MiniRAGIndex(tmp_path / f"steps-{trial}", embedder=embedder, extractor=BracketExtractor(),
                             graph_backend=backend)
        for doc in order:
            index.insert([doc])
        gone = rng.sample(docs, 4)
        index.delete([d.id for d in gone[:2]])
        index.insert([gone[0]])
        index.delete([gone[2].id])
        index.delete([gone[3].id])
        kept = [d for d in docs if d not in gone[1:]]
        assert _graph_state(index) == _graph_state(_index(tmp_path / f"whole-{trial}", embedder, kept, backend)), trial
