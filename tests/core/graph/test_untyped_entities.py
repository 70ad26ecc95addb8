"""An entity no extractor could type: UNKNOWN in the graph, never a type of the pool, never an
answer type, and outvoted by any real type another chunk gives it."""

from __future__ import annotations

import networkx as nx

from minirag_core.graph.arrays import Subgraph
from minirag_core.graph.records import ENTITY, merged_view, tally_of
from minirag_core.retrieval.query.seeds import select_answer_candidates
from minirag_core.retrieval.topology.array_search import answer_candidates
from minirag_core.storage.base import rank_type_pool
from minirag_core.types import UNKNOWN_TYPE


def _view(types: list[str]) -> str:
    sources = {f"c{i}": {"name": "Vega", "type": t, "description": ""} for i, t in enumerate(types)}
    return merged_view(ENTITY, tally_of(ENTITY, sources))["type"]


def test_a_real_type_outvotes_unknown_records():
    assert _view([UNKNOWN_TYPE, UNKNOWN_TYPE, "PERSON"]) == "PERSON"
    assert _view([UNKNOWN_TYPE, ""]) == UNKNOWN_TYPE
    assert _view([]) == UNKNOWN_TYPE


def test_the_type_pool_holds_no_unknown_type():
    rows = [(UNKNOWN_TYPE, "a", 9), ("PERSON", "b", 1), ("", "c", 4), ("PERSON", "d", 2)]
    assert rank_type_pool(rows, 3) == {"PERSON": ["d", "b"]}


def test_unknown_is_never_an_answer_type():
    graph = nx.Graph()
    graph.add_node("SEED", type="PERSON", hop=0)
    graph.add_node("X", type=UNKNOWN_TYPE, hop=1)
    graph.add_node("Y", type="PERSON", hop=1)
    graph.add_edges_from([("SEED", "X"), ("SEED", "Y")])
    for types, expected in (([UNKNOWN_TYPE], []), (["unknown", "PERSON"], ["Y"])):
        assert select_answer_candidates(graph, {"SEED"}, types, 5) == expected
        assert answer_candidates(Subgraph.from_graph(graph), {"SEED"}, types, 5) == expected
