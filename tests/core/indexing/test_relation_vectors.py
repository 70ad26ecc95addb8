"""Relation vectors (light mode's) are embedded once asked for, and kept current from then on."""

from __future__ import annotations

import pytest

from index_state import _assert_same_vectors, _graph_state, _vector_state
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.relation_vectors import MARKER_FILE
from minirag_core.search.graph_vectors import relations_with_vectors
from minirag_core.search.vectors import RELATIONS
from minirag_core.types import Document

QUESTION = "Who founded the company that built the Harbour Bridge drones?"
FACTS = [
    "Marta Kovac founded Bluefield Robotics in Tallinn in 2004. Bluefield Robotics builds warehouse drones.",
    "Bluefield Robotics supplied the drones that inspected the Harbour Bridge in Sydney.",
    "Jonas Eberle directed the film Silent Harbour. Silent Harbour was produced by Northlight Studios.",
    "Northlight Studios was acquired by Veridian Media in 2019. Veridian Media is based in Toronto.",
    "Amara Osei composed the score of Silent Harbour. She studied music at the Royal Academy in London.",
    "The Royal Academy awarded Amara Osei a fellowship in 2015.",
    "Tomas Lind wrote the novel Grey Orchard. The novel was adapted by Jonas Eberle into a film.",
    "Grey Orchard won the Nordic Book Prize in 2011. Tomas Lind lives in Uppsala.",
    "Veridian Media hired Marta Kovac as an adviser in 2021.",
    "Uppsala University granted Tomas Lind an honorary degree.",
    "Kenji Mori designed the Harbour Bridge lighting. Kenji Mori works for Lumen Works in Osaka.",
]


@pytest.fixture(scope="module")
def facts():  # stated relations (the offline extractor keeps chat turns as co-occurrence only)
    return [Document(f"doc{i:02d}", text) for i, text in enumerate(FACTS)]


def _relation_ids(index: MiniRAGIndex) -> set[str]:
    return index.vectors.store.ids(RELATIONS)


def _expected(index: MiniRAGIndex) -> set[str]:
    return set(relations_with_vectors(index.graph_store))


def _light(index: MiniRAGIndex) -> list[tuple[str, float]]:
    return [(c.chunk_id, round(c.score, 5)) for c in index.query(QUESTION, mode="light").chunks]


def test_first_light_query_embeds_them_and_later_writes_keep_them(tmp_path, embedder, facts):
    index = MiniRAGIndex(tmp_path / "lazy", embedder=embedder)
    index.insert(facts[:6])
    assert _expected(index) and not _relation_ids(index) and not index.index_relations
    index.query(QUESTION)  # mini and naive search no relation vectors
    index.query(QUESTION, mode="naive")
    assert not _relation_ids(index)

    eager = MiniRAGIndex(tmp_path / "eager", embedder=embedder, index_relations=True)
    eager.insert(facts[:6])
    assert _light(index) == _light(eager)
    assert _relation_ids(index) == _expected(index) and index.index_relations
    assert (tmp_path / "lazy" / MARKER_FILE).exists()

    index.insert(facts[6:9])
    eager.insert(facts[6:9])
    assert _relation_ids(index) == _expected(index)
    reopened = MiniRAGIndex(tmp_path / "lazy", embedder=embedder)  # another process: the marker says kept
    assert reopened.index_relations
    reopened.delete(facts[0].id)
    reopened.insert(facts[9:11])
    eager.delete(facts[0].id)
    eager.insert(facts[9:11])
    assert _relation_ids(reopened) == _expected(reopened)
    assert _graph_state(reopened) == _graph_state(eager)
    _assert_same_vectors(_vector_state(reopened), _vector_state(eager))


async def test_async_light_query_embeds_them_too(embedder, facts):
    index = MiniRAGIndex(embedder=embedder)  # no workdir: kept in memory
    index.insert(facts[:4])
    assert not _relation_ids(index)
    result = await index.aquery(QUESTION, mode="light")
    assert result.chunks and _relation_ids(index) == _expected(index)


def test_asking_for_them_on_a_workdir_built_without_embeds_them_all(tmp_path, embedder, facts):
    MiniRAGIndex(tmp_path / "wd", embedder=embedder).insert(facts[:5])
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, index_relations=True)
    assert not _relation_ids(index)
    index.insert(facts[5:6])  # the first write embeds the relations of the first five too
    assert _relation_ids(index) == _expected(index)
    assert len(_expected(index)) > len(_expected_of(facts[5:6], tmp_path, embedder))


def _expected_of(docs, tmp_path, embedder) -> set[str]:
    alone = MiniRAGIndex(tmp_path / "alone", embedder=embedder)
    alone.insert(docs)
    return _expected(alone)


def test_false_never_embeds_them_and_old_workdirs_keep_theirs(tmp_path, embedder, facts):
    never = MiniRAGIndex(tmp_path / "never", embedder=embedder, index_relations=False)
    never.insert(facts[:3])
    never.query(QUESTION, mode="light")
    assert not _relation_ids(never) and not (tmp_path / "never" / MARKER_FILE).exists()

    built = MiniRAGIndex(tmp_path / "old", embedder=embedder, index_relations=True)
    built.insert(facts[:3])
    (tmp_path / "old" / MARKER_FILE).unlink()  # a workdir from before the marker
    reopened = MiniRAGIndex(tmp_path / "old", embedder=embedder)
    assert reopened.index_relations
    reopened.insert(facts[3:5])
    assert _relation_ids(reopened) == _expected(reopened)


def test_index_relations_must_be_a_bool_or_none(embedder):
    with pytest.raises(ValueError, match="index_relations"):
        MiniRAGIndex(embedder=embedder, index_relations="yes")


def test_a_process_that_does_not_keep_them_hands_them_back_to_light_mode(tmp_path, embedder, facts):
    keeper = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    keeper.insert(facts[:4])
    keeper.query(QUESTION, mode="light")
    assert _relation_ids(keeper) == _expected(keeper)
    MiniRAGIndex(tmp_path / "wd", embedder=embedder, index_relations=False).insert(facts[4:])  # adds relations
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    assert _relation_ids(reopened) < _expected(reopened)
    assert not reopened.index_relations  # the marker says they were not kept current
    reopened.query(QUESTION, mode="light")
    assert _relation_ids(reopened) == _expected(reopened) and reopened.index_relations
