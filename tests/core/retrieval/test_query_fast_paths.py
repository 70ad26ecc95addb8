"""Query-path speed-ups give what they replace: mini mode's array graph work (``graph/arrays.py``, ``retrieval/topology/array_search.py``)
equals the networkx functions (subgraph, answer candidates, key edges in order, paths), the
mention index equals the entities' mentions, and entity search without metadata finds the same."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from minirag_core.retrieval.topology.key_edges import key_edges as reference_key_edges
from minirag_core.retrieval.topology.key_edges import edge_weights, score_edges
from minirag_core.graph.heterogeneous import CHUNK, ENTITY, MENTION, RELATION
from minirag_core.graph.arrays import Subgraph
from minirag_core.retrieval.topology.array_search import PathSearch, answer_candidates, key_edges, relation_subgraph
from minirag_core.retrieval.topology.batch_paths import best_paths
from minirag_core.retrieval.topology.reasoning_paths import paths_from_seed, top_paths
from minirag_core.retrieval.query.seeds import select_answer_candidates
from minirag_core.storage.networkx_store import NetworkXGraphStore

TYPES = ["PERSON", "PLACE", "EVENT"]


@st.composite
def stores(draw: st.DrawFn) -> NetworkXGraphStore:
    """A random heterogeneous graph: entities (some hubs), relations with tied weights, chunks."""
    n = draw(st.integers(2, 40))
    store = NetworkXGraphStore(None)
    g = store.graph
    for i in range(n):
        g.add_node(f"e{i:02d}", kind=ENTITY, name=f"E{i}", type=draw(st.sampled_from(TYPES)),
                   description="", source_chunks=[])
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=n, max_size=4 * n))
    pairs += [(0, i) for i in range(1, n) if draw(st.booleans())]  # e00 is often a hub
    for a, b in pairs:
        if a != b:
            g.add_edge(f"e{a:02d}", f"e{b:02d}", kind=RELATION, weight=float(draw(st.integers(1, 3))),
                       description=f"{a}-{b}", keywords="k")
    for c in range(3):
        g.add_node(f"c{c}", kind=CHUNK, text="t", doc_id="d", order=c, n_tokens=1)
        g.add_edge(f"c{c}", f"e{c % n:02d}", kind=MENTION, description="")
    return store


def _same_subgraph(sub: Subgraph, graph: nx.Graph) -> None:
    assert sub.nodes == sorted(graph.nodes)
    assert sub.hop == [graph.nodes[n]["hop"] for n in sub.nodes]
    assert sub.types == [graph.nodes[n]["type"] for n in sub.nodes]
    edges = {(sub.nodes[u], sub.nodes[v]): w for u, v, w in zip(sub.left, sub.right, sub.weight)}
    assert edges == {(min(u, v), max(u, v)): e["weight"] for u, v, e in graph.edges(data=True)}
    for (u, v) in edges:
        assert sub.edge_attrs([(u, v)])[u, v]["description"] == graph.edges[u, v]["description"]


@settings(max_examples=150, deadline=None)
@given(store=stores(), data=st.data())
def test_array_graph_work_equals_the_networkx_functions(store: NetworkXGraphStore, data: st.DataObject) -> None:
    entities = store.entity_ids()
    seeds = sorted(set(data.draw(st.lists(st.sampled_from(entities), min_size=1, max_size=4))))
    hops, max_nodes = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 30))
    store.MAX_NEIGHBORS = data.draw(st.integers(1, 5))  # small caps exercise the hub rule
    reference = store.entity_subgraph(seeds, hops, max_nodes)
    for sub in (relation_subgraph(store, seeds, hops, max_nodes), Subgraph.from_graph(reference)):
        _same_subgraph(sub, reference)
        types = data.draw(st.lists(st.sampled_from(TYPES), max_size=2))
        limit = data.draw(st.integers(0, 10))
        candidates = answer_candidates(sub, set(seeds), types, limit)
        assert candidates == select_answer_candidates(reference, set(seeds), types, limit)
        top = data.draw(st.integers(0, 12))
        chosen = key_edges(sub, seeds, candidates, hops, top)
        expected = reference_key_edges(score_edges(reference, seeds, candidates, hops), top, edge_weights(reference))
        assert list(chosen.items()) == list(expected.items())
        search = PathSearch(sub, chosen, set(candidates))
        length, beam, branch = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 8)), data.draw(st.integers(0, 4))
        for seed in seeds:
            assert search.from_seed(seed, max_length=length, beam_width=beam, max_branch=branch) == paths_from_seed(
                reference, seed, key_edges=chosen, answer_candidates=set(candidates), max_length=length,
                beam_width=beam, max_branch=branch)


@settings(max_examples=300, deadline=None)
@given(store=stores(), data=st.data())
def test_all_seeds_paths_at_once_equal_each_seeds_search(store: NetworkXGraphStore, data: st.DataObject) -> None:
    """``best_paths`` (every seed's beam in array operations) gives, for each (seed, w_v) pair,
    exactly ``top_paths(from_seed(seed), w_v, k)``: the same paths, scores and order."""
    entities = store.entity_ids()
    seeds = sorted(set(data.draw(st.lists(st.sampled_from(entities), min_size=1, max_size=4))))
    hops = data.draw(st.integers(0, 3))
    sub = relation_subgraph(store, seeds, hops, data.draw(st.integers(1, 30)))
    candidates = answer_candidates(sub, set(seeds), data.draw(st.lists(st.sampled_from(TYPES), max_size=2)),
                                   data.draw(st.integers(0, 10)))
    search = PathSearch(sub, key_edges(sub, seeds, candidates, hops, data.draw(st.integers(0, 12))), set(candidates))
    length, beam, branch = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 8)), data.draw(st.integers(0, 4))
    k = data.draw(st.integers(0, 12))
    weights = st.sampled_from([1.0, 0.7123, 0.55, 0.0])
    pairs = data.draw(st.lists(st.tuples(st.sampled_from([*entities, "not a node"]), weights), max_size=6))
    found = best_paths(search, pairs, max_length=length, beam_width=beam, max_branch=branch, k=k)
    assert found == [[(list(p.nodes), score) for p, score in top_paths(
        search.from_seed(seed, max_length=length, beam_width=beam, max_branch=branch), w, k)] for seed, w in pairs]


def test_path_codes_order_paths_by_length_then_nodes() -> None:
    """The one-number path keys order as (length, nodes) do, packed or (long paths) ranked."""
    import numpy as np

    from minirag_core.retrieval.topology.batch_paths import _path_codes

    rng = np.random.default_rng(3)
    for width, n_nodes in ((3, 40), (12, 10**6)):
        lengths = rng.integers(1, width + 1, 300)
        nodes = np.where(np.arange(width) < lengths[:, None], rng.integers(0, n_nodes, (300, width)), -1)
        expected = sorted(range(300), key=lambda i: (lengths[i], nodes[i].tolist()))
        codes = _path_codes(nodes, lengths, n_nodes)
        assert sorted(range(300), key=lambda i: (codes[i], i)) == expected


def test_key_edges_count_more_than_64_anchors(monkeypatch) -> None:
    """Eq. 2 on bit sets holds past one 64-bit word of anchors, and without NumPy 2's popcount."""
    import random

    import numpy as np

    import minirag_core.retrieval.topology.array_search as array_search

    rng = random.Random(7)
    store = NetworkXGraphStore(None)
    g = store.graph
    for i in range(160):
        g.add_node(f"e{i:03d}", kind=ENTITY, name=f"E{i}", type=rng.choice(TYPES), description="", source_chunks=[])
    for _ in range(400):
        a, b = rng.sample(range(160), 2)
        g.add_edge(f"e{a:03d}", f"e{b:03d}", kind=RELATION, weight=float(rng.randint(1, 3)), description="", keywords="k")
    seeds = sorted(rng.sample(store.entity_ids(), 90))
    sub = relation_subgraph(store, seeds, 2, 200)
    reference = store.entity_subgraph(seeds, 2, 200)
    candidates = answer_candidates(sub, set(seeds), TYPES, 30)
    expected = reference_key_edges(score_edges(reference, seeds, candidates, 2), 50, edge_weights(reference))
    assert len(set(seeds) | set(candidates)) > 64
    assert list(key_edges(sub, seeds, candidates, 2, 50).items()) == list(expected.items())
    bits = np.array([[0, 1, 2**64 - 1], [3, 2**63, 12345]], dtype=np.uint64)
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert array_search._popcount(bits).tolist() == [[0, 1, 64], [2, 1, 6]]
    assert list(key_edges(sub, seeds, candidates, 2, 50).items()) == list(expected.items())


def test_relation_arrays_follow_writes() -> None:
    store = NetworkXGraphStore(None)
    for name in ("a", "b", "c"):
        store.graph.add_node(name, kind=ENTITY, name=name, type="PERSON")
    store.graph.add_edge("a", "b", kind=RELATION, weight=1.0, description="", keywords="")
    assert relation_subgraph(store, ["a"], 1, 10).nodes == ["a", "b"]
    store.graph.add_edge("a", "c", kind=RELATION, weight=2.0, description="", keywords="")
    store.changed()  # what the index calls after every write
    assert relation_subgraph(store, ["a"], 1, 10).nodes == ["a", "b", "c"]


def test_chunk_links_are_each_entitys_mentions_and_follow_writes() -> None:
    store = NetworkXGraphStore(None)
    g = store.graph
    for name in ("a", "b"):
        g.add_node(name, kind=ENTITY, name=name, type="PERSON")
    g.add_edge("a", "b", kind=RELATION, weight=1.0, description="", keywords="")
    for chunk in ("c2", "c1"):
        g.add_node(chunk, kind=CHUNK, text="t", doc_id="d", order=0, n_tokens=1)
    g.add_edge("a", "c2", kind=MENTION, description="a in c2")
    g.add_edge("a", "c1", kind=MENTION, description="a in c1")
    assert store.chunk_links(["a", "b", "missing"]) == {"a": {"c1": "a in c1", "c2": "a in c2"}, "b": {}}
    assert store.entity_chunk_ids(["a", "b", "missing"]) == {"a": ["c1", "c2"], "b": []}
    g.add_edge("b", "c1", kind=MENTION, description="b in c1")
    store.changed()
    assert store.chunk_links(["b"]) == {"b": {"c1": "b in c1"}}


def test_entity_search_without_metadata_finds_the_same(tmp_path) -> None:
    import numpy as np

    from minirag_core.storage.chroma_store import ChromaVectorStore

    store = ChromaVectorStore(tmp_path / "chroma")
    vectors = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.upsert("entities", [f"e{i}" for i in range(50)], vectors, [""] * 50, [{"type": "T"}] * 50)
    full = store.query_many("entities", vectors[:3], 4)
    bare = store.query_many("entities", vectors[:3], 4, metadata=False)
    assert [[(i, s) for i, s, _ in row] for row in bare] == [[(i, s) for i, s, _ in row] for row in full]
    assert full[0][0][:2] == ("e0", full[0][0][1]) and full[0][0][2] == {"type": "T"}
    assert all(m == {} for row in bare for _, _, m in row)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["on ", "since ", "at ", ": ", "\n", " ", "_", "T", "-", "/", ".", ":", "May ", "5th",
                                 "19", "20", "2026", "0106", "20260106", "1999123", "13", "00", "1", "x", "report "]), max_size=14))
def test_compact_date_hint_changes_no_date(pieces: list[str]) -> None:
    import re

    import minirag_core.extraction.temporal as temporal

    text = "".join(pieces)
    found = temporal.find_day_dates(text)
    hint, temporal._COMPACT_HINT = temporal._COMPACT_HINT, re.compile("")  # every text tries the pattern
    try:
        assert found == temporal.find_day_dates(text)
    finally:
        temporal._COMPACT_HINT = hint
