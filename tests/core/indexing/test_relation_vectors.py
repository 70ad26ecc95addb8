"""Relation vectors (light mode's) are embedded while indexing and kept current; a query never
embeds them, and says so when those it searched are not complete."""

from __future__ import annotations

import pytest

from index_state import _assert_same_vectors, _graph_state, _vector_state
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.relation_vectors import INCOMPLETE_NOTE, MARKER_FILE
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


def test_writes_embed_them_and_keep_them_current(tmp_path, embedder, facts):
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert(facts[:6])
    assert index.index_relations and _expected(index) and _relation_ids(index) == _expected(index)
    assert (tmp_path / "wd" / MARKER_FILE).exists()
    result = index.query(QUESTION, mode="light")
    assert result.chunks and INCOMPLETE_NOTE not in result.notes

    index.insert(facts[6:9])
    assert _relation_ids(index) == _expected(index)
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)  # another process
    reopened.delete(facts[0].id)
    reopened.insert(facts[9:11])
    assert _relation_ids(reopened) == _expected(reopened)
    one_shot = MiniRAGIndex(tmp_path / "one-shot", embedder=embedder)
    one_shot.insert(facts[1:11])
    assert _graph_state(reopened) == _graph_state(one_shot)
    _assert_same_vectors(_vector_state(reopened), _vector_state(one_shot))
    assert _light(reopened) == _light(one_shot)


async def test_async_light_query_notes_what_it_lacks(embedder, facts):
    kept = MiniRAGIndex(embedder=embedder)  # no workdir: kept in memory
    kept.insert(facts[:4])
    assert _relation_ids(kept) == _expected(kept)
    assert INCOMPLETE_NOTE not in (await kept.aquery(QUESTION, mode="light")).notes
    never = MiniRAGIndex(embedder=embedder, index_relations=False)
    never.insert(facts[:4])
    result = await never.aquery(QUESTION, mode="light")
    assert result.chunks and INCOMPLETE_NOTE in result.notes and not _relation_ids(never)


def test_a_workdir_built_without_them_gets_them_at_the_next_write_not_from_a_query(tmp_path, embedder, facts):
    MiniRAGIndex(tmp_path / "wd", embedder=embedder, index_relations=False).insert(facts[:5])
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    result = index.query(QUESTION, mode="light")
    assert result.chunks and INCOMPLETE_NOTE in result.notes and not _relation_ids(index)
    index.insert(facts[5:6])  # the first write embeds the relations of the first five too
    assert _relation_ids(index) == _expected(index)
    assert len(_expected(index)) > len(_expected_of(facts[5:6], tmp_path, embedder))
    assert INCOMPLETE_NOTE not in index.query(QUESTION, mode="light").notes


def _expected_of(docs, tmp_path, embedder) -> set[str]:
    alone = MiniRAGIndex(tmp_path / "alone", embedder=embedder)
    alone.insert(docs)
    return _expected(alone)


def test_false_never_embeds_them_and_old_workdirs_keep_theirs(tmp_path, embedder, facts):
    never = MiniRAGIndex(tmp_path / "never", embedder=embedder, index_relations=False)
    never.insert(facts[:3])
    assert INCOMPLETE_NOTE in never.query(QUESTION, mode="light").notes
    assert not _relation_ids(never) and not (tmp_path / "never" / MARKER_FILE).exists()

    built = MiniRAGIndex(tmp_path / "old", embedder=embedder, index_relations=True)
    built.insert(facts[:3])
    (tmp_path / "old" / MARKER_FILE).unlink()  # a workdir from before the marker
    reopened = MiniRAGIndex(tmp_path / "old", embedder=embedder)
    assert INCOMPLETE_NOTE not in reopened.query(QUESTION, mode="light").notes  # it holds them all
    reopened.insert(facts[3:5])
    assert _relation_ids(reopened) == _expected(reopened)


def test_index_relations_must_be_a_bool_or_none(embedder):
    with pytest.raises(ValueError, match="index_relations"):
        MiniRAGIndex(embedder=embedder, index_relations="yes")


def test_a_process_that_does_not_keep_them_hands_them_back_to_the_next_writer(tmp_path, embedder, facts):
    keeper = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    keeper.insert(facts[:4])
    assert _relation_ids(keeper) == _expected(keeper)
    MiniRAGIndex(tmp_path / "wd", embedder=embedder, index_relations=False).insert(facts[4:])  # adds relations
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    assert _relation_ids(reopened) < _expected(reopened)
    assert INCOMPLETE_NOTE in reopened.query(QUESTION, mode="light").notes  # the marker says not kept current
    assert _relation_ids(reopened) < _expected(reopened)  # a query embeds nothing
    reopened.delete("no-such-document")  # any write
    assert _relation_ids(reopened) == _expected(reopened)
    assert INCOMPLETE_NOTE not in reopened.query(QUESTION, mode="light").notes
