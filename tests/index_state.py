"""What tests compare between two indexes: the graph's nodes and edges, and the vectors."""

from __future__ import annotations

import networkx as nx
import numpy as np

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.search.vectors import CHUNKS, ENTITIES, RELATIONS
from minirag_core.storage.graph_stores import whole_graph


def _graph_state(index: MiniRAGIndex) -> dict:
    data = nx.node_link_data(whole_graph(index.graph_store), edges="edges")
    data["nodes"] = sorted(data["nodes"], key=lambda n: n["id"])
    data["edges"] = sorted(data["edges"], key=lambda e: (min(e["source"], e["target"]), max(e["source"], e["target"])))
    for edge in data["edges"]:
        edge["source"], edge["target"] = sorted((edge["source"], edge["target"]))
    return data


def _vector_state(index: MiniRAGIndex) -> dict:
    state = {}
    for collection in (CHUNKS, ENTITIES, RELATIONS):
        ids = sorted(index.vectors.store.ids(collection))
        vectors = index.vectors.store.get_embeddings(collection, ids) if ids else {}
        state[collection] = {i: vectors[i] for i in ids}
    return state


def _assert_same_vectors(a: dict, b: dict) -> None:
    for collection in a:
        assert a[collection].keys() == b[collection].keys(), collection
        for key in a[collection]:
            np.testing.assert_allclose(a[collection][key], b[collection][key], atol=1e-5)
