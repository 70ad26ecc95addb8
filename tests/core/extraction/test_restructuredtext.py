"""A small reStructuredText site indexed end to end: sections (over- and underlined titles) as
subjects, roles as code names, ``:doc:`` links as page edges, code blocks kept out of the prose."""

from __future__ import annotations

import re

import pytest

from minirag_core.extraction import page_structure, restructuredtext
from minirag_core.graph.names import normalize_entity_name
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document

USAGE = """.. _usage-guide:

=============
Using widgets
=============

Widgets are built by :func:`~widgets.build_widget` and rendered with
:meth:`widgets.Widget.render`. The settings are described in :doc:`reference/settings`.

.. note::

   Every widget keeps a reference to its parent frame.

Drawing a frame
---------------

The frame is drawn in three steps::

    frame = Frame(border_colour="teal")
    frame.paint_background()

.. code-block:: python

    import widgets
    widgets.draw_outline(frame)
"""

SETTINGS = """Widget settings
===============

.. versionadded:: 2.1
   :option: ignored

   Settings may be read from the environment.

Each widget reads its settings at start. See :ref:`usage-guide` and :doc:`../usage`
for how widgets are built.

The settings of every widget are loaded by :func:`widgets.load_settings`.
"""

_ADORNMENT = re.compile(r"^\s*([=\-~^\"'`#*+.:_])\1{2,}\s*$")
_ROLE_MARKUP = re.compile(r"^[A-Z]+:|:[a-z]+:|`")


@pytest.fixture(scope="module")
def site(embedder, tmp_path_factory):
    index = MiniRAGIndex(tmp_path_factory.mktemp("rst_site"), embedder=embedder)
    index.insert([Document("usage.rst", USAGE, {"source": "usage.rst"}),
                  Document("reference/settings.rst", SETTINGS, {"source": "reference/settings.rst"})])
    return index


def _entities(index) -> dict[str, dict]:
    g = index.graph_store.working_graph()
    return {n: g.nodes[n] for n in g.nodes if g.nodes[n].get("kind") == "entity"}


def test_sections_are_clean_subjects_and_cuts(site):
    chunks = site.graph_store.chunks(site.graph_store.chunk_ids())
    assert chunks
    for attrs in chunks.values():
        first = attrs["text"].lstrip().splitlines()[0]
        assert not _ADORNMENT.match(first), attrs["text"][:80]
        assert not any(_ADORNMENT.match(str(s)) or "==" in str(s) for s in attrs.get("subjects", []))
    subjects = {a["doc_id"]: set(a.get("subjects", [])) for a in chunks.values()}
    assert {"USING WIDGETS", "USAGE"} <= subjects["usage.rst"]
    assert "WIDGET SETTINGS" in subjects["reference/settings.rst"]


def test_roles_become_code_names_without_role_markup(site):
    entities = _entities(site)
    for name in ("WIDGETS.BUILD_WIDGET", "WIDGETS.WIDGET.RENDER", "WIDGETS.LOAD_SETTINGS"):
        assert entities.get(name, {}).get("type") == "CODE", (name, entities.get(name))
    dirty = [n for n in entities if _ROLE_MARKUP.search(str(entities[n].get("name", n)))]
    assert not dirty, dirty


def test_doc_and_ref_links_between_pages_are_edges(site):
    g = site.graph_store.working_graph()
    usage, settings = normalize_entity_name("usage"), normalize_entity_name("reference/settings")
    assert g.has_edge("USING WIDGETS", settings) and "links to" in g.edges["USING WIDGETS", settings]["keywords"]
    assert g.has_edge("WIDGET SETTINGS", usage)
    descriptions = g.edges["WIDGET SETTINGS", usage]["description"]
    assert "(section #usage-guide)" in descriptions and "../usage" in descriptions  # the :ref: and the :doc: link


def test_code_blocks_are_code_not_prose(site):
    entities = _entities(site)
    assert entities.get("DRAW_OUTLINE", {}).get("type") == "CODE"
    assert not any("TEAL" in str(n) or "BORDER_COLOUR" == n for n in entities), sorted(entities)


def test_blocks_of_a_page():
    found = restructuredtext.blocks(USAGE)
    lines = USAGE.splitlines()
    headings = [(b.text, b.level, lines[b.line]) for b in found if b.kind == "heading"]
    # a section starts at its label and overline, so a chunk cut never leaves the title behind
    assert headings == [("Using widgets", 1, ".. _usage-guide:"), ("Drawing a frame", 2, "Drawing a frame")]
    assert [b.lang for b in found if b.kind == "code"] == ["", "python"]
    note = next(b for b in found if "parent frame" in b.text)
    assert note.kind == "text"
    settings = restructuredtext.blocks(SETTINGS)
    assert any(b.text == "Settings may be read from the environment." for b in settings)
    assert not any("ignored" in b.text or "2.1" in b.text for b in settings)


def test_doc_targets_resolve_relative_to_the_page():
    assert page_structure.link_target("reference/settings.rst", "../usage") == ("usage", "")
    assert page_structure.link_target("usage.rst", "reference/settings") == ("reference/settings", "")
    assert page_structure.link_target("guide/a.rst", "/index") == ("index", "")
    assert page_structure.link_target("usage.rst", restructuredtext.REF_PREFIX + "usage-guide") is None
    refs = page_structure.label_pages({"usage.rst": USAGE, "reference/settings.rst": SETTINGS})
    assert refs == {"usage-guide": "usage"}
    assert page_structure.link_target("reference/settings.rst", restructuredtext.REF_PREFIX + "Usage-Guide",
                                      refs) == ("usage", "usage-guide")
    assert page_structure.page_key("guide/a.rst") == "guide/a"
