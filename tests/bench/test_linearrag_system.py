"""The LinearRAG peer adapter on a small invented corpus (skipped when the peer's folder or its
imports are missing): evidence ranked on top, chunk ids mapped back through the shuffle, and the
per-question steps the same as the peer's own ``retrieve``."""

from __future__ import annotations

import pytest

from benchmarks.quality.linearrag_system import (
    PEER_DIR,
    LinearRAGSystem,
    peer_available,
    shuffled_passages,
)

pytestmark = pytest.mark.skipif(not peer_available(), reason=f"LinearRAG is not at {PEER_DIR}")

PEOPLE = [("Orla Vance", "violinist", "Kestrel Bay", "Glass Harbour"),
          ("Tomasz Whitlow", "painter", "Ashgrove", "Copper Fields"),
          ("Ines Marlowe", "architect", "Dunmere", "the Halden Library"),
          ("Rafael Ostrander", "novelist", "Port Elwyn", "Salt and Ember"),
          ("Mirela Casterby", "sculptor", "Brackenford", "The Iron Heron"),
          ("Jonas Feldtmann", "composer", "Wexmoor", "Northern Lanterns"),
          ("Sabine Holloway", "photographer", "Larkspur Falls", "Quiet Streets"),
          ("Edmund Tarrow", "physicist", "Crane Hollow", "the Tarrow lattice"),
          ("Lucia Brenner", "playwright", "Mossbridge", "The Paper Orchard"),
          ("Anton Gravesend", "chemist", "Highcliff", "the Gravesend reaction")]


def corpus() -> dict[str, str]:
    """Two chunks per person: where they were born, and what they made (20 chunks)."""
    texts = {}
    for n, (name, job, town, work) in enumerate(PEOPLE):
        texts[f"doc{n}#born"] = f"{name} was born in {town} in 19{50 + n}. {name} later became a {job}."
        texts[f"doc{n}#work"] = f"The {job} {name} is best known for {work}, first presented in 19{80 + n}."
    return texts


@pytest.fixture(scope="module")
def system(tmp_path_factory) -> LinearRAGSystem:
    pytest.importorskip("igraph")
    pytest.importorskip("pyarrow")
    return LinearRAGSystem(corpus(), tmp_path_factory.mktemp("linearrag") / "work", top_k=10)


def test_shuffle_is_a_fixed_permutation() -> None:
    ids = list(corpus())
    first, again = shuffled_passages(ids), shuffled_passages(list(reversed(ids)))
    assert first == again and sorted(first) == sorted(ids)
    assert first != sorted(ids)  # the numbering no longer follows the documents
    assert shuffled_passages(ids, seed=1) != first


@pytest.mark.slow
def test_chunk_ids_map_back_through_the_shuffle(system: LinearRAGSystem) -> None:
    texts = corpus()
    store = system.rag.passage_embedding_store
    assert system.stats()["passages"] == len(texts) and system.stats()["entities"] > len(PEOPLE)
    for hash_id, numbered in store.hash_id_to_text.items():  # "i:text", i the shuffled position
        assert numbered.split(":", 1)[1] == texts[system.rank_id(hash_id)]
    for chunk_id, text in texts.items():  # its own text ranks a chunk next to (at worst) its sibling
        assert chunk_id in system.rank(text, 2)


@pytest.mark.slow
def test_evidence_is_ranked_on_top(system: LinearRAGSystem) -> None:
    # passage scores come mostly from the entities a passage holds (personalised PageRank), so a
    # person's other chunk may come first: the evidence is in the top 2 of 20
    assert "doc6#born" in system.rank("Where was Sabine Holloway born?", 2)
    assert "doc5#work" in system.rank("What is the composer Jonas Feldtmann best known for?", 2)
    two_hop = system.rank("In which town was the creator of Salt and Ember born?", 5)
    assert {"doc3#born", "doc3#work"} <= set(two_hop)


@pytest.mark.slow
def test_rank_follows_the_peer_retrieve(system: LinearRAGSystem) -> None:
    for question in ("Where was Orla Vance born?", "Which chemist comes from Highcliff?", "who made a library"):
        own = system.rank(question)
        peer = system.rag.retrieve([{"question": question, "answer": ""}])[0]["sorted_passage"]
        assert own == [system.order[int(text.split(":", 1)[0])] for text in peer]


def test_too_few_passages_is_refused(tmp_path) -> None:
    pytest.importorskip("igraph")
    with pytest.raises(ValueError, match="at least 16 passages"):
        LinearRAGSystem({"a": "Orla Vance was born in Kestrel Bay."}, tmp_path / "work", embedding_model=object(),
                        spacy_model="unused")
