"""Eq. 2 and eq. 3 checked against hand computation on small graphs."""

from __future__ import annotations

import networkx as nx
import pytest

from minirag_core.retrieval.topology.key_edges import key_edges, score_edges
from minirag_core.retrieval.topology.reasoning_paths import path_gain, path_score, paths_from_seed, top_paths


@pytest.fixture()
def chain() -> nx.Graph:
    # S - A - B - C - D, plus a branch A - X
    g = nx.Graph()
    g.add_edges_from([("S", "A"), ("A", "B"), ("B", "C"), ("C", "D"), ("A", "X")])
    return g


def test_eq2_counts_anchor_nodes_within_k_hops_of_either_endpoint(chain):
    # seeds {S}, answers {C}, k = 1
    scores = score_edges(chain, ["S"], ["C"], hops=1)
    # edge S-A: S is an endpoint (in), C is 2 hops from A -> 1
    assert scores[("A", "S")] == 1
    # edge A-B: S within 1 of A, C within 1 of B -> 2
    assert scores[("A", "B")] == 2
    # edge B-C: S is 2 hops from B -> out; C endpoint -> 1
    assert scores[("B", "C")] == 1
    # edge C-D: C endpoint -> 1
    assert scores[("C", "D")] == 1
    # edge A-X: S within 1 of A -> 1; C is 2 from A -> 0
    assert scores[("A", "X")] == 1


def test_eq2_with_k2_and_duplicate_anchor_counted_once(chain):
    scores = score_edges(chain, ["S", "S"], ["C", "S"], hops=2)
    assert scores[("C", "D")] == 1          # S is 3 hops from C -> only C
    assert scores[("A", "X")] == 2          # S (1 hop) and C (2 hops from A)
    assert scores[("B", "C")] == 2


def test_key_edges_keeps_top_ranked_deterministically(chain):
    scores = score_edges(chain, ["S"], ["C"], hops=1)
    top = key_edges(scores, 1)
    assert top == {("A", "B"): 2}


def test_eq3_path_score_by_hand(chain):
    keys = {("A", "B"): 2.0, ("A", "S"): 1.0}
    answers = {"C"}
    # path S-A-B-C: key edges S-A (1) + A-B (2) = 3; answer nodes on path: C -> 1
    assert path_gain(("S", "A", "B", "C"), keys, answers) == 4.0
    assert path_score(0.8, 4.0) == pytest.approx(0.8 * (1 + 4.0))
    # a path without key edges or answers scores just w_v
    assert path_score(0.8, path_gain(("S",), keys, answers)) == pytest.approx(0.8)


def test_paths_are_acyclic_bounded_and_ranked(chain):
    keys = {("A", "B"): 2.0, ("A", "S"): 1.0}
    found = paths_from_seed(chain, "S", key_edges=keys, answer_candidates={"C"}, max_length=3)
    assert all(len(set(p.nodes)) == len(p.nodes) for p in found)
    assert max(len(p.nodes) for p in found) == 4
    best = top_paths(found, 0.5, 2)
    assert best[0][0].nodes == ("S", "A", "B", "C")
    assert best[0][1] == pytest.approx(0.5 * (1 + 4.0))
    assert len(best) == 2


def test_hub_cannot_explode_the_search():
    hub = nx.star_graph(5000)  # node 0 joined to 5000 leaves
    hub = nx.relabel_nodes(hub, str)
    found = paths_from_seed(hub, "0", key_edges={}, answer_candidates=set(), max_length=3,
                            beam_width=32, max_branch=8)
    assert len(found) <= 1 + 3 * 32


def test_key_edges_tie_goes_to_the_stronger_edge_not_the_first_id(chain):
    scores = {("A", "B"): 2, ("A", "S"): 2, ("B", "C"): 1}
    assert key_edges(scores, 1) == {("A", "B"): 2}  # no weights: ids decide
    assert key_edges(scores, 1, {("A", "B"): 1.0, ("A", "S"): 3.0}) == {("A", "S"): 2}
    assert key_edges(scores, 1, {("A", "B"): 1.0, ("A", "S"): 3.0, ("B", "C"): 9.0}) == {("A", "S"): 2}  # counts first
