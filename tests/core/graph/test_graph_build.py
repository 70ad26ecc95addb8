"""The heterogeneous graph: merging across chunks and exact removal of a chunk's share."""

from __future__ import annotations

import networkx as nx

from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.names import normalize_entity_name
from minirag_core.types import Chunk, ExtractedEntity, ExtractedRelation, ExtractionResult


def _chunk(cid: str, doc: str = "d1") -> Chunk:
    return Chunk(id=cid, doc_id=doc, order=0, text=f"text of {cid}", n_tokens=3)


def test_name_variants_merge_to_one_node():
    assert normalize_entity_name('"Li Hua"') == normalize_entity_name("li  hua") == "LI HUA"
    assert normalize_entity_name("“Li Hua”") == "LI HUA"
    assert normalize_entity_name("  ") == ""


def _extraction(desc: str, weight: float = 2.0) -> ExtractionResult:
    return ExtractionResult(
        entities=[ExtractedEntity('"Li Hua"', "person", f"Li Hua {desc}"),
                  ExtractedEntity("Wolfgang", "PERSON", f"Wolfgang {desc}")],
        relations=[ExtractedRelation("LI HUA", "wolfgang", f"friends {desc}", "friendship", weight)],
    )


def test_chunk_nodes_entity_nodes_and_both_edge_kinds():
    g = nx.Graph()
    graph_ops.add_chunk(g, _chunk("c1"), _extraction("in c1"))
    assert g.nodes["c1"]["kind"] == "chunk" and g.nodes["c1"]["doc_id"] == "d1"
    assert g.nodes["LI HUA"]["kind"] == "entity" and g.nodes["LI HUA"]["name"] == "Li Hua"
    assert g.nodes["LI HUA"]["type"] == "PERSON"
    assert g.edges["LI HUA", "c1"]["kind"] == "mention"
    assert g.edges["LI HUA", "c1"]["description"] == "Li Hua in c1"
    assert g.edges["LI HUA", "WOLFGANG"]["kind"] == "relation"
    assert g.edges["LI HUA", "WOLFGANG"]["weight"] == 2.0


def test_weights_sum_and_descriptions_merge_then_removal_restores():
    g = nx.Graph()
    graph_ops.add_chunk(g, _chunk("c1"), _extraction("in c1", 2.0))
    only_c1 = nx.node_link_data(g, edges="edges")
    graph_ops.add_chunk(g, _chunk("c2", "d2"), _extraction("in c2", 3.0))
    edge = g.edges["LI HUA", "WOLFGANG"]
    assert edge["weight"] == 5.0
    assert sorted(edge["sources"]) == ["c1", "c2"]
    assert "in c1" in edge["description"] and "in c2" in edge["description"]
    assert sorted(g.nodes["LI HUA"]["sources"]) == ["c1", "c2"]
    graph_ops.remove_chunks(g, ["c2"])
    assert nx.node_link_data(g, edges="edges") == only_c1


def test_entities_and_edges_without_sources_disappear():
    g = nx.Graph()
    graph_ops.add_chunk(g, _chunk("c1"), _extraction("x"))
    entities, edges = graph_ops.remove_chunks(g, ["c1"])
    assert g.number_of_nodes() == 0
    assert {"LI HUA", "WOLFGANG"} <= entities
    assert ("LI HUA", "WOLFGANG") in edges


def test_self_loops_and_empty_names_are_dropped():
    g = nx.Graph()
    result = ExtractionResult(
        entities=[ExtractedEntity('""', "x", "nothing")],
        relations=[ExtractedRelation("A", "a", "self", "", 1.0), ExtractedRelation("", "B", "half", "", 1.0)],
    )
    graph_ops.add_chunk(g, _chunk("c1"), result)
    assert [n for n in g.nodes if n != "c1"] == []
