"""Mini mode's per-chunk work on a store's link arrays gives exactly what the Python loops over
the store's lists give, on random graphs: each chunk's graph term and linking entities, each
path's specificity, the bridges (scores, kept ways, order), entity specificities, answer
candidates ranked by specificity, and the order paths are listed in."""

from __future__ import annotations

import copy
import random

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from minirag_core.graph.heterogeneous import CHUNK, ENTITY, MENTION, RELATION
from minirag_core.retrieval.extensions.bridge_arrays import bridge_scores_on_arrays, bridges_over
from minirag_core.retrieval.extensions.bridging import bridge_scores
from minirag_core.retrieval.topology.array_search import PathSearch, answer_candidates, key_edges, relation_subgraph
from minirag_core.retrieval.topology.batch_paths import named_paths, path_table
from minirag_core.retrieval.topology.chunk_ranking import relative_specificity, relative_value
from minirag_core.retrieval.topology.chunk_terms import graph_terms_on_arrays, graph_terms_on_lists
from minirag_core.storage.networkx_store import NetworkXGraphStore
from minirag_core.types import ReasoningPath, sorted_paths

TYPES = ["PERSON", "PLACE", "EVENT"]


@st.composite
def linked_stores(draw: st.DrawFn) -> NetworkXGraphStore:
    """Entities with relations (tied weights, hubs) and chunks that mention entities and are
    about some of them; ``e00`` is mentioned by most chunks."""
    rng = random.Random(draw(st.integers(0, 10**6)))
    n, n_chunks = draw(st.integers(2, 30)), draw(st.integers(1, 40))
    store = NetworkXGraphStore(None)
    g: nx.Graph = store.graph
    entities = [f"e{i:02d}" for i in range(n)]
    for e in entities:
        g.add_node(e, kind=ENTITY, name=e.upper(), type=rng.choice(TYPES), description="", source_chunks=[])
    for _ in range(rng.randint(n, 4 * n)):
        a, b = rng.sample(entities, 2)
        g.add_edge(a, b, kind=RELATION, weight=float(rng.randint(1, 3)), description=f"{a}-{b}", keywords="k")
    for c in range(n_chunks):
        chunk = f"c{c:02d}"
        mentioned = set(rng.sample(entities, rng.randint(0, min(n, 6)))) | ({"e00"} if rng.random() < 0.8 else set())
        about = sorted(rng.sample(sorted(mentioned), min(len(mentioned), rng.randint(0, 2))))
        g.add_node(chunk, kind=CHUNK, text="t", doc_id=f"d{c % 4}", order=c, n_tokens=1, subjects=about)
        for e in mentioned:
            g.add_edge(chunk, e, kind=MENTION, description="")
    return store


class ListsOnly:
    """A store seen through its lists only (no link arrays): the reference path."""

    def __init__(self, store: NetworkXGraphStore) -> None:
        self._store = store

    def entity_chunk_ids(self, ids):
        return self._store.entity_chunk_ids(ids)

    def chunk_entities(self, ids):
        return self._store.chunk_entities(ids)

    def subject_chunks(self, ids):
        return self._store.subject_chunks(ids)


def _paths(store: NetworkXGraphStore, data: st.DataObject) -> tuple[list[ReasoningPath], object, list[str]]:
    entities = store.entity_ids()
    seeds = sorted(set(data.draw(st.lists(st.sampled_from(entities), min_size=1, max_size=4))))
    sub = relation_subgraph(store, seeds, 2, data.draw(st.integers(1, 30)))
    candidates = answer_candidates(sub, set(seeds), ["PERSON"], 5)
    search = PathSearch(sub, key_edges(sub, seeds, candidates, 2, 8), set(candidates))
    weights = st.sampled_from([1.0, 0.7123, 0.55, 0.0])
    pairs = [(f"q{i % 2}", seed, data.draw(weights)) for i, seed in enumerate(seeds)]
    table = path_table(search, [(s, w) for _, s, w in pairs], max_length=data.draw(st.integers(0, 3)),
                       beam_width=data.draw(st.integers(1, 8)), max_branch=data.draw(st.integers(0, 4)), k=4)
    paths = [ReasoningPath(pairs[i][0], nodes, score)
             for i, nodes, score in zip(table.pair.tolist(), named_paths(search, table), table.scores.tolist())]
    return paths, table, sub.nodes


@settings(max_examples=200, deadline=None)
@given(store=linked_stores(), data=st.data())
def test_chunk_graph_terms_on_arrays_equal_the_loops(store: NetworkXGraphStore, data: st.DataObject) -> None:
    paths, table, names = _paths(store, data)
    n_chunks, use_idf = data.draw(st.sampled_from([len(store.chunk_ids()), 3, 1000])), data.draw(st.booleans())
    expected_paths = copy.deepcopy(paths)
    scores, linking = graph_terms_on_arrays(store.link_arrays(), paths, table, names, n_chunks, use_idf)
    expected_scores, expected_linking = graph_terms_on_lists(ListsOnly(store), expected_paths, n_chunks, use_idf)
    assert scores == dict(expected_scores)  # the same floats: the same sums in the same order
    assert linking is not None and not dict(linking)  # nothing worked out before it is asked for
    for chunk in [*store.chunk_ids(), "not a chunk"]:  # worked out per chunk when asked for
        assert linking.get(chunk, []) == expected_linking.get(chunk, [])
        assert linking[chunk] == expected_linking[chunk]
    assert [p.specificity for p in paths] == [p.specificity for p in expected_paths]


def _bridge_inputs(store: NetworkXGraphStore, data: st.DataObject) -> tuple[dict, dict, dict]:
    """(relevance with ties, seeds, bridge options) drawn for ``store``."""
    chunks, entities = store.chunk_ids(), store.entity_ids()
    ties = st.sampled_from([1.0, 0.5, 0.25, 0.8125, 0.0])
    relevance = {c: data.draw(ties) for c in chunks}
    seeds = {e: data.draw(ties) for e in data.draw(st.lists(st.sampled_from(entities), max_size=4))}
    options = dict(seed_chunks=data.draw(st.integers(0, 6)), steps=data.draw(st.integers(0, 3)),
                   damping=data.draw(st.sampled_from([0.8, 0.5, 1.0])), max_frontier=data.draw(st.integers(0, 4)))
    return relevance, seeds, options


@settings(max_examples=200, deadline=None)
@given(store=linked_stores(), data=st.data())
def test_bridges_on_arrays_equal_the_loops(store: NetworkXGraphStore, data: st.DataObject) -> None:
    relevance, seeds, options = _bridge_inputs(store, data)
    n_chunks = len(store.chunk_ids())
    exponent = data.draw(st.sampled_from([1.0, 0.5, 0.0]))

    def weights(ids):
        if exponent == 0:
            return {}
        found = store.entity_chunk_ids(list(ids))
        return {e: relative_value(len(c), n_chunks, exponent) for e, c in found.items() if c}

    expected = bridge_scores(ListsOnly(store), relevance, seeds, entity_weight=weights, **options)
    found = bridge_scores_on_arrays(store.link_arrays(), store.link_arrays(subjects=True), relevance, seeds,
                                    n_chunks=n_chunks, specificity_exponent=exponent, **options)
    assert found[0] == expected[0]
    assert found[1] == expected[1]


@settings(max_examples=200, deadline=None)
@given(store=linked_stores(), data=st.data())
def test_bridges_with_a_local_pool_on_arrays_equal_the_lookups(store: NetworkXGraphStore, data: st.DataObject) -> None:
    relevance, seeds, options = _bridge_inputs(store, data)
    options.update(n_chunks=len(store.chunk_ids()), specificity_exponent=data.draw(st.sampled_from([1.0, 0.5, 0.0])),
                   local_pool=data.draw(st.integers(0, 8)))
    assert bridges_over(store, relevance, seeds, **options) == bridges_over(ListsOnly(store), relevance, seeds,
                                                                            **options)


@settings(max_examples=100, deadline=None)
@given(store=linked_stores(), data=st.data())
def test_specificity_and_ranked_candidates_on_arrays_equal_the_lists(store: NetworkXGraphStore,
                                                                      data: st.DataObject) -> None:
    entities = store.entity_ids()
    ids = data.draw(st.lists(st.sampled_from([*entities, "not an entity"]), max_size=12))
    n_chunks, exponent = data.draw(st.sampled_from([len(store.chunk_ids()), 7])), data.draw(st.sampled_from([1.0, 0.5]))
    assert relative_specificity(store, ids, n_chunks, exponent) == relative_specificity(
        ListsOnly(store), ids, n_chunks, exponent)
    seeds = sorted(set(data.draw(st.lists(st.sampled_from(entities), min_size=1, max_size=3))))
    sub = relation_subgraph(store, seeds, 2, 30)
    limit = data.draw(st.integers(0, 10))
    weight = relative_specificity(store, sub.nodes, n_chunks)
    degree = sub.degree().tolist()
    expected = sorted((i for i, (n, t) in enumerate(zip(sub.nodes, sub.types)) if n not in seeds and t == "PLACE"),
                      key=lambda i: (sub.hop[i], -round(weight.get(sub.nodes[i], 1.0), 6), -degree[i], i))
    found = answer_candidates(sub, set(seeds), ["PLACE"], limit, lambda names: relative_specificity(
        store, names, n_chunks))
    assert found == [sub.nodes[i] for i in expected[:limit]]


def test_sorted_paths_order_as_the_key_does() -> None:
    rng = random.Random(5)
    paths = [ReasoningPath(rng.choice(["a", "b"]), [rng.choice("xyz") for _ in range(rng.randint(1, 3))],
                           rng.choice([1.0, 0.5, 2.0]), rng.choice([1.0, 0.5, 0.25])) for _ in range(300)]
    expected = sorted(paths, key=lambda p: (-p.weighted_score, -p.score, len(p.nodes), p.query_entity, p.nodes))
    assert [id(p) for p in sorted_paths(paths)] == [id(p) for p in expected]


def test_link_arrays_follow_writes() -> None:
    store = NetworkXGraphStore(None)
    g = store.graph
    g.add_node("e1", kind=ENTITY, name="E1", type="PERSON", description="", source_chunks=[])
    g.add_node("c1", kind=CHUNK, text="t", doc_id="d", order=0, n_tokens=1, subjects=["e1"])
    g.add_edge("c1", "e1", kind=MENTION, description="")
    assert store.link_arrays().chunk_lists(["e1"]) == {"e1": ["c1"]}
    g.add_node("c2", kind=CHUNK, text="t", doc_id="d", order=1, n_tokens=1, subjects=[])
    g.add_edge("c2", "e1", kind=MENTION, description="")
    store.changed()
    assert store.link_arrays().chunk_lists(["e1"]) == {"e1": ["c1", "c2"]}
    assert store.link_arrays(subjects=True).chunk_lists(["e1"]) == {"e1": ["c1"]}


@settings(max_examples=60, deadline=None)
@given(store=linked_stores(), data=st.data())
def test_expansion_with_a_small_row_cache_equals_the_store_s(store: NetworkXGraphStore, data: st.DataObject) -> None:
    """The relation rows kept as lists are dropped when they pass their bound: the expansion is unchanged."""
    from minirag_core.graph.arrays import RelationArrays

    seeds = sorted(set(data.draw(st.lists(st.sampled_from(store.entity_ids()), min_size=1, max_size=4))))
    max_nodes = data.draw(st.integers(1, 30))
    store.MAX_NEIGHBORS = data.draw(st.integers(1, 5))
    arrays = RelationArrays.from_graph(store.graph, store.MAX_NEIGHBORS)
    arrays.CACHED_NEIGHBOURS = data.draw(st.integers(0, 6))
    for _ in range(2):  # the second time from the kept rows
        sub = arrays.expand(seeds, 2, max_nodes)
        reference = store.entity_subgraph(seeds, 2, max_nodes)
        assert sub.nodes == sorted(reference.nodes)
        assert sub.hop == [reference.nodes[n]["hop"] for n in sub.nodes]
