"""The snapshot file: node-link JSON one item per line, read back to the same graph (in the
node and adjacency order networkx's reader gives), readable by networkx, the earlier one-piece layout still read, and
equal strings shared between the items read."""

from __future__ import annotations

import json

import networkx as nx

from minirag_core.storage.base import atomic_write_json
from minirag_core.storage.graph_snapshot import read_snapshot, write_snapshot


def _graph() -> nx.Graph:
    g = nx.Graph(documents={"d1": {"chunks": ["c1", "c2"], "metadata": {"note": "line\nbreak ]}, \u2028"}}})
    g.add_node("c1", kind="chunk", text="first\n], {", relations=[["A", "B"]], subjects=[])
    g.add_node("c2", kind="chunk", text="second", relations=[], subjects=["A"])
    for e in ("B", "A", "Zoë"):
        g.add_node(e, kind="entity", type="PERSON", source_chunks=["c1"], sources={"c1": {"type": "PERSON"}})
    g.add_edge("A", "B", kind="relation", weight=2.5, description="A met B", source_chunks=["c1"])
    g.add_edge("A", "c1", kind="mention", description="")
    g.add_edge("Zoë", "c2", kind="mention", description="Zoë")
    g.add_node("lonely", kind="entity")
    return g


def _same(a: nx.Graph, b: nx.Graph) -> None:
    """Equal graphs, in the node and adjacency order networkx's own reader gives ``b``'s data."""
    assert nx.node_link_data(a, edges="edges") == nx.node_link_data(b, edges="edges")
    b = nx.node_link_graph(nx.node_link_data(b, edges="edges"), edges="edges")
    assert list(a) == list(b) and all(list(a._adj[n]) == list(b._adj[n]) for n in a)


def test_round_trip_keeps_graph_order_and_log_seq(tmp_path):
    path = tmp_path / "graph.json"
    write_snapshot(path, _graph(), 7)
    assert len(path.read_text(encoding="utf-8").splitlines()) > 8  # one item per line
    graph, seq = read_snapshot(path)
    assert seq == 7
    _same(graph, _graph())
    data = json.loads(path.read_text(encoding="utf-8"))  # plain node-link JSON
    _same(nx.node_link_graph(data, edges="edges"), _graph())


def test_empty_graph_round_trips(tmp_path):
    path = tmp_path / "graph.json"
    write_snapshot(path, nx.Graph(), 0)
    graph, seq = read_snapshot(path)
    assert (len(graph), graph.number_of_edges(), graph.graph, seq) == (0, 0, {}, 0)


def test_one_piece_snapshot_is_still_read(tmp_path):
    path = tmp_path / "graph.json"
    data = nx.node_link_data(_graph(), edges="edges")
    data["log_seq"] = 3
    atomic_write_json(path, data)
    graph, seq = read_snapshot(path)
    assert seq == 3
    _same(graph, _graph())


def test_equal_strings_read_are_shared(tmp_path):
    path = tmp_path / "graph.json"
    write_snapshot(path, _graph(), 0)
    graph, _ = read_snapshot(path)
    assert graph.nodes["A"]["type"] is graph.nodes["B"]["type"]
    assert graph.nodes["A"]["source_chunks"][0] is graph.nodes["B"]["source_chunks"][0]
    assert graph.nodes["c1"]["relations"][0][0] is next(n for n in graph._adj if n == "A")
