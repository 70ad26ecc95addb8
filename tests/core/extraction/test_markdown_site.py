"""A small documentation site indexed end to end: Markdown read by its structure (heading
subjects, clean names), code identifiers as entities, links between pages as edges, and answer
types proposed only from the types the graph holds."""

from __future__ import annotations

import re

import pytest

from minirag_core.extraction import markdown
from minirag_core.extraction.code_names import block_names, span_name
from minirag_core.graph.names import normalize_entity_name
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document

INSTALL = """# Installing the toolkit { #install }

The toolkit runs on any machine with a recent interpreter. Read the
[configuration guide](config.md#loading-settings) before the first start.

!!! note "Before you start"
    Every command below assumes a fresh virtual environment.

## Creating a client { #create-client }

Call `make_client()` with your project name; the returned `Client` object keeps the
connection open until `Client.close` is called.

```python
from toolkit import Client, make_client

def connect(name: str) -> Client:
    client = make_client(name)
    client.ping_server()
    return client
```
"""

CONFIG = """# Configuration guide

Settings are read from a file next to the project. See [the installation page](install.md)
for how to create a client first.

=== "File"

    Put a `settings.toml` file in the project folder and call `load_settings` on it.

## Loading settings

When `load_settings` finds no file it raises `SettingsMissingError`, and the client falls back
to its built-in defaults.
"""

_MARKUP = re.compile(r"[{}\[\]`]|!!!|===|\]\(|^#|\(\)$")


@pytest.fixture(scope="module")
def site(embedder, tmp_path_factory):
    index = MiniRAGIndex(tmp_path_factory.mktemp("site"), embedder=embedder)
    index.insert([Document("install.md", INSTALL, {"source": "install.md"}),
                  Document("config.md", CONFIG, {"source": "config.md"})])
    return index


def _graph(index):
    return index.graph_store.working_graph()


def test_links_between_pages_are_edges_with_the_link_text(site):
    g = _graph(site)
    install, config = normalize_entity_name("install"), normalize_entity_name("config")
    for source, target, text in [("INSTALLING THE TOOLKIT", config, "configuration guide"),
                                 ("CONFIGURATION GUIDE", install, "the installation page")]:
        assert g.has_edge(source, target), (source, target)
        edge = g.edges[source, target]
        assert "links to" in edge["keywords"] and text in edge["description"]
    # every chunk of a page is about the page's entity: a link reaches the page as a subject does
    about = site.graph_store.subject_chunks([config])[config]
    assert about and {site.graph_store.chunks(about)[c]["doc_id"] for c in about} == {"config.md"}


def test_code_identifiers_are_code_entities(site):
    g = _graph(site)
    types = {n: g.nodes[n].get("type") for n in g.nodes if g.nodes[n].get("kind") == "entity"}
    for name in ("MAKE_CLIENT", "CLIENT", "CLIENT.CLOSE", "CONNECT", "PING_SERVER", "LOAD_SETTINGS"):
        assert types.get(name) == "CODE", (name, types.get(name))
    assert types.get("SETTINGSMISSINGERROR") == "ERROR"
    assert g.has_edge("CREATING A CLIENT", "CONNECT")  # defined in that section's code block


def test_names_carry_no_markdown_syntax(site):
    g = _graph(site)
    names = [g.nodes[n].get("name", n) for n in g.nodes if g.nodes[n].get("kind") == "entity"]
    assert names
    dirty = [n for n in names if _MARKUP.search(str(n)) or "INSTALL }" in str(n).upper()]
    assert not dirty, dirty
    assert not any("BEFORE YOU START" in str(n).upper() and "!!!" in str(n) for n in names)


def test_each_chunk_is_about_its_heading_path(site):
    chunks = site.graph_store.chunks(site.graph_store.chunk_ids())
    subjects = {a["doc_id"]: a.get("subjects", []) for a in chunks.values()}
    assert {"INSTALLING THE TOOLKIT", "CREATING A CLIENT", "INSTALL"} <= set(subjects["install.md"])
    assert {"CONFIGURATION GUIDE", "LOADING SETTINGS", "CONFIG"} <= set(subjects["config.md"])


def test_how_do_i_question_proposes_only_types_the_graph_holds(site):
    pool = site.type_pool()
    mapping = site.map_query("How do I create a client and load my settings?")
    assert mapping.answer_types and set(mapping.answer_types) <= set(pool)
    assert mapping.answer_types[0] == "CODE"


def test_markdown_extensions_never_reach_the_parsed_text():
    found = markdown.blocks(INSTALL + CONFIG)
    texts = " ".join(b.text for b in found if b.kind != "code")
    assert "!!!" not in texts and "===" not in texts and "{ #" not in texts
    assert [b.anchor for b in found if b.kind == "heading"][:2] == ["install", "create-client"]
    code = [b for b in found if b.kind == "code"]
    assert len(code) == 1 and code[0].lang == "python" and "def connect" in code[0].text
    assert "def connect" not in texts  # fenced code is not prose
    # the admonition body is prose (dedented), not an indented code block
    assert any(b.kind == "text" and b.text.startswith("Every command below") for b in found)


def test_code_names_from_spans_and_blocks():
    assert span_name("@field_check") == "field_check" and span_name("Model.dump()") == "Model.dump"
    assert span_name("Field(strict=True)") == "Field" and span_name("'after'") is None
    assert span_name("pip install toolkit") is None
    names = dict(block_names("from toolkit import Client\nclass Store:\n    pass\nx = Store()\nx.save_all()\n"))
    assert names == {"Client": "imported", "Store": "defined", "save_all": "called"}
    assert dict(block_names("fn main() {\n  let s = Store::new();\n  s.flush_all();\n}", "rust")) == {
        "flush_all": "called"}


def test_technical_shapes_need_code_in_the_graph():
    from minirag_core.retrieval.query.technical_types import technical_types

    assert technical_types("How do I reset it?", ["CODE", "CONCEPT", "PERSON"]) == ["CODE", "CONCEPT"]
    assert technical_types("Why does load() fail with an error?", ["ERROR", "CODE"]) == ["ERROR", "CODE"]
    assert technical_types("How do I get to the park?", ["CONCEPT", "PERSON", "LOCATION"]) == []


def test_a_question_naming_code_asks_for_code():
    from minirag_core.retrieval.query.technical_types import technical_types

    pool = ["CODE", "CONCEPT", "FOOD", "PERSON"]
    for question in ("Does @cached_call also check what my function returns?", "Is `x: int = Field(3)` valid?",
                     "Does model_copy() run validators?", "Can I set save_all on it?", "Is BaseStore thread-safe?",
                     "Is the ORM attribute metadata_ kept?", "Does getUser retry?", "Is os.path slow here?"):
        assert technical_types(question, pool) == ["CODE"], question
    for question in ("Did she order the iPhone at McDonald's, e.g. at noon (or later)?", "Is Dr. Smith in St. Louis?"):
        assert technical_types(question, pool) == [], question
    assert technical_types("Does model_copy() run validators?", ["PERSON", "FOOD"]) == []  # no code in the graph


def test_identifiers_written_as_code_are_whole_query_entities():
    from minirag_core.retrieval.query.entities import extract_query_entities

    found = extract_query_entities("Why does make_client() fail after info.data changes, and what does Client return?")
    assert found[:2] == ["make_client", "info.data"] and "Client" in found
    assert extract_query_entities("When did MariaGarcia meet Li Hua?") == ["Maria Garcia", "Li Hua"]  # names still split


def test_links_resolve_relative_to_the_page():
    assert markdown.link_target("guide/a.md", "../ref/b.md#part") == ("ref/b", "part")
    assert markdown.link_target("guide/a.md", "https://example.org/b.md") is None
    assert markdown.link_target("guide/a.md", "img/logo.png") is None
    assert markdown.link_target("guide/a.md", "sub/") == ("guide/sub/index", "")
