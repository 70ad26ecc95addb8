"""``BatchedLadybugStore`` writes what the stock ``LadybugPropertyGraphStore`` writes, in batches:
the same entity rows, ``LINKS`` and ``MENTIONS`` edges for the same upserts (repeated nodes and
relations, relations that end at a chunk or at a missing node, batches smaller than the input)."""

from __future__ import annotations

from typing import Any

import pytest

lb = pytest.importorskip("ladybug")
pytest.importorskip("llama_index.graph_stores.ladybug")

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
from llama_index.graph_stores.ladybug import LadybugPropertyGraphStore

from llama_index_minirag import ladybug_writes
from llama_index_minirag.ladybug_writes import BatchedLadybugStore


def _writes() -> tuple[list[Any], list[Any], list[Relation]]:
    chunks = [ChunkNode(id_=f"c{i}", text=f"chunk {i}", properties={"ref_doc_id": f"d{i % 2}"}) for i in range(3)]
    entities = [EntityNode(name=f"E{i}", label=["PERSON", "PLACE", "DATE"][i % 3],
                           properties={"triplet_source_id": f"c{i % 3}", "entity_id": f"e{i}"}) for i in range(7)]
    entities.append(EntityNode(name="E1", label="ORG", properties={"triplet_source_id": "c2"}))  # rewritten: last wins
    relations = [Relation(label="RELATED", source_id=f"E{i}", target_id=f"E{(i * 3 + 1) % 7}",
                          properties={"triplet_source_id": f"c{i % 3}"}) for i in range(7)]
    relations += [Relation(label="RELATED", source_id="E0", target_id="E1", properties={"triplet_source_id": "c2"}),
                  Relation(label="MENTIONED_IN", source_id="E3", target_id="c1", properties={"position": 1}),
                  Relation(label="RELATED", source_id="E2", target_id="missing", properties={}),
                  Relation(label="OTHER", source_id="E5", target_id="E6", properties={"triplet_source_id": "c0"})]
    return chunks, entities, relations


def _contents(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    def rows(query: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in store.connection.execute(query))

    return {"entities": rows("MATCH (e:Entity) RETURN e.id, e.label, e.name, e.triplet_source_id, e.ref_doc_id"),
            "chunks": rows("MATCH (c:Chunk) RETURN c.id, c.text, c.ref_doc_id"),
            "links": rows("MATCH (a)-[r:LINKS]->(b) RETURN a.id, b.id, r.label, r.triplet_source_id"),
            "mentions": rows("MATCH (c:Chunk)-[:MENTIONS]->(e) RETURN c.id, e.id")}


@pytest.mark.parametrize("batch", [2, 2000])
def test_batched_writes_equal_the_stock_store(batch, monkeypatch) -> None:
    monkeypatch.setattr(ladybug_writes, "BATCH", batch)
    found = []
    for cls in (LadybugPropertyGraphStore, BatchedLadybugStore):
        store = cls(lb.Database(":memory:"), use_vector_index=False)
        chunks, entities, relations = _writes()
        store.upsert_nodes(chunks + entities[:2])
        store.upsert_nodes(entities[2:])  # E1 again, in a batch of its own
        store.upsert_relations(relations)
        store.upsert_relations(relations[1:3])  # again: nothing new
        found.append(_contents(store))
    stock, batched = found
    assert batched == stock
    assert len(stock["entities"]) == 7 and ("E1", "ORG", "E1", "c2", None) in stock["entities"]
    assert ("E0", "E1", "RELATED", "c2") in stock["links"]  # one edge, the last write's chunk
    assert {("c0", "E0"), ("c2", "E0")} <= set(stock["mentions"])  # but each write's chunk mentions it
