"""``MiniRAGIndex.export_graph`` and ``minirag export``: the graph read back by networkx equals the index's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import networkx as nx
import pytest

from minirag_core.graph.export import PATH_SEPARATOR
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.interfaces.cli import main
from minirag_core.storage.graph_stores import whole_graph
from minirag_core.types import Document

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "lihuaworld_sample"
PAGE = """# Tea growing

Tea is grown on hills in Darjeeling and Assam by the Tea Board.

## Harvest

The first flush is picked in March by pickers of the Tea Board.
"""


def _documents() -> list[Document]:
    docs = [Document(id=p.name, text=p.read_text(encoding="utf-8"), metadata={"source": str(p)})
            for p in sorted(SAMPLE.glob("*.txt"))[:3]]
    return docs + [Document(id="tea.md", text=PAGE, metadata={"source": "tea.md"})]


@pytest.fixture(scope="module", params=["networkx", "sqlite"])
def index(request, tmp_path_factory, embedder):
    built = MiniRAGIndex(tmp_path_factory.mktemp(request.param) / "wd", embedder=embedder,
                         graph_backend=request.param)
    built.insert(_documents())
    return built


def _check_against_index(read: nx.Graph, index: MiniRAGIndex, graphml: bool) -> None:
    graph = whole_graph(index.graph_store)
    stats = index.stats()
    kinds = nx.get_node_attributes(read, "kind")
    assert sum(k == "chunk" for k in kinds.values()) == stats["chunks"]
    assert sum(k == "entity" for k in kinds.values()) == stats["entities"] > 0
    edge_kinds = [k for _, _, k in read.edges(data="kind")]
    assert edge_kinds.count("relation") == stats["relations"] > 0
    assert edge_kinds.count("mention") == stats["mentions"] > 0
    for node, attrs in read.nodes(data=True):
        stored = graph.nodes[node]
        if attrs["kind"] == "chunk":
            assert attrs["text"] == stored["text"] and attrs["doc_id"] == stored["doc_id"]
            assert attrs["order"] == stored["order"] and attrs["n_tokens"] == stored["n_tokens"]
            path = stored.get("heading_path")
            if path:
                assert attrs["heading_path"] == (PATH_SEPARATOR.join(path) if graphml else path)
            else:
                assert "heading_path" not in attrs  # None is left out, not written as "None"
        else:
            assert (attrs["name"], attrs["type"], attrs["description"]) == (
                stored["name"], stored["type"], stored["description"])
            assert attrs["weight"] == sum(1 for n in graph.neighbors(node) if graph.nodes[n]["kind"] == "chunk")
    for u, v, attrs in read.edges(data=True):
        stored = graph.edges[u, v]
        if attrs["kind"] == "relation":
            assert attrs["weight"] == pytest.approx(float(stored["weight"]))
            assert (attrs["description"], attrs["keywords"]) == (stored["description"], stored["keywords"])
        else:
            assert {graph.nodes[u]["kind"], graph.nodes[v]["kind"]} == {"entity", "chunk"}
            assert attrs["description"] == stored["description"]


def test_graphml_round_trips_through_networkx(index, tmp_path):
    path = index.export_graph(tmp_path / "g.graphml")
    read = nx.read_graphml(path)
    _check_against_index(read, index, graphml=True)
    paths = [a["heading_path"] for _, a in read.nodes(data=True) if "heading_path" in a]
    assert paths and all(p.startswith("Tea growing") for p in paths)  # the Markdown page's chunks
    assert all(a["kind"] != "chunk" or a["start_index"] < a["end_index"] for _, a in read.nodes(data=True))


def test_json_round_trips_through_networkx(index, tmp_path):
    path = index.export_graph(tmp_path / "g.json", format="json")
    read = nx.node_link_graph(json.loads(path.read_text(encoding="utf-8")), edges="edges")
    _check_against_index(read, index, graphml=False)


def test_unknown_format_is_refused(index, tmp_path):
    with pytest.raises(ValueError, match="graphml, json"):
        index.export_graph(tmp_path / "g.gexf", format="gexf")
    assert not (tmp_path / "g.gexf").exists()


def test_cli_export(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in sorted(SAMPLE.glob("*.txt"))[:2]:
        shutil.copy(path, corpus / path.name)
    wd = tmp_path / "wd"
    assert main(["index", str(corpus), "--workdir", str(wd), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["export", "--workdir", str(wd)]) == 0
    assert "wrote" in capsys.readouterr().out
    default = nx.read_graphml(wd / "graph-export.graphml")
    out = tmp_path / "g.json"
    assert main(["export", "--workdir", str(wd), "--format", "json", "--out", str(out)]) == 0
    as_json = nx.node_link_graph(json.loads(out.read_text(encoding="utf-8")), edges="edges")
    assert set(default.nodes) == set(as_json.nodes) and default.number_of_edges() == as_json.number_of_edges() > 0
    assert main(["export", "--workdir", str(tmp_path / "none")]) == 2  # no index there: one-line error
