"""A workdir of an older schema is brought up to date on open (its chunk vectors embedded again
where their text changed), or refused with the command that rebuilds it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from minirag_core.indexing.index import IndexSettingsMismatch, MiniRAGIndex
from minirag_core.indexing.manifest import SCHEMA_VERSION
from minirag_core.search import vectors as vector_texts
from minirag_core.search.graph_vectors import chunk_vector_text
from minirag_core.search.vectors import CHUNKS
from minirag_core.types import Document
from stand_ins import HashEmbedder, NameListExtractor, NameMapper

DOCS = [Document(f"d{i}", f"Ann{i} met Bob{i} at the market. Bob{i} sold apples to Cid{i} on Monday.")
        for i in range(6)]


def _open(path) -> MiniRAGIndex:
    return MiniRAGIndex(path, embedder=HashEmbedder(), extractor=NameListExtractor(), query_mapper=NameMapper())


def _set_schema(path, version) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    (path / "manifest.json").write_text(json.dumps({**manifest, "schema_version": version}))


def _chunk_vectors(index: MiniRAGIndex) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    ids = index.graph_store.chunk_ids()
    return index.vectors.stored_texts(CHUNKS, ids), index.vectors.store.get_embeddings(CHUNKS, ids)


def test_an_older_workdir_gets_the_chunk_vectors_of_this_schema(tmp_path, monkeypatch) -> None:
    with monkeypatch.context() as old_rules:  # schema 1: a chunk was embedded as its text alone
        old_rules.setattr(vector_texts, "RANKING_EXTRA_SHARE", 0.0)
        _open(tmp_path / "old").insert(DOCS)
    _set_schema(tmp_path / "old", 1)
    fresh = _open(tmp_path / "new")
    fresh.insert(DOCS)
    g = fresh.graph_store.working_graph(fresh.graph_store.chunk_ids())
    assert any(chunk_vector_text(g, c) != g.nodes[c]["text"] for c in g.nodes if g.nodes[c].get("kind") == "chunk")

    migrated = _open(tmp_path / "old")
    texts, vectors = _chunk_vectors(migrated)
    fresh_texts, fresh_vectors = _chunk_vectors(fresh)
    assert texts == fresh_texts
    for chunk_id, vector in fresh_vectors.items():
        np.testing.assert_allclose(vectors[chunk_id], vector, atol=1e-6)
    assert json.loads((tmp_path / "old" / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert SCHEMA_VERSION >= 2


@pytest.mark.parametrize("version, says", [(0, "minirag index PATH ... --workdir"), (None, "minirag index PATH"),
                                           (SCHEMA_VERSION + 1, "upgrade minirag")])
def test_a_schema_it_cannot_catch_up_from_is_refused(tmp_path, version, says) -> None:
    _open(tmp_path / "wd").insert(DOCS[:2])
    _set_schema(tmp_path / "wd", version)
    with pytest.raises(IndexSettingsMismatch, match="schema version") as refused:
        _open(tmp_path / "wd")
    assert says in str(refused.value) and str(tmp_path / "wd") in str(refused.value)
