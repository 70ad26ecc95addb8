"""Per-chunk records and their tally: the merged attributes kept record by record equal those
derived from all records at once, in any order of adds and removals; a partial item reads the
rest only when a removal needs them; and in the SQLite store a hub entity is one short row."""

from __future__ import annotations

import json
import random

import pytest

from minirag_core.graph.records import (ENTITY, MAX_MERGED_DESCRIPTIONS, PARTIAL, RELATION, add_record,
                                        drop_record, merged_view, new_item, record_count, tally_of)
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document
from index_state import _graph_state


def _entity_record(rng: random.Random) -> dict:
    record = {"name": rng.choice(["Vega", "VEGA", "Vega Corp"]), "type": rng.choice(["ORG", "ORG", "PERSON", ""]),
              "description": rng.choice(["", *(f"note {i}" for i in range(12))])}
    if rng.random() < 0.2:
        record["raw"] = "V. VEGA"
    return record


def _relation_record(rng: random.Random) -> dict:
    return {"weight": rng.choice([0.1, 0.2, 0.7, 1.0, 2.5]), "keywords": rng.choice(["a", "a, b", "c", ""]),
            "description": rng.choice(["", *(f"link {i}" for i in range(12))])}


def _expected(kind: str, sources: dict) -> dict:
    tally = tally_of(kind, sources)
    return {"tally": tally, **merged_view(kind, tally)}


@pytest.mark.parametrize("kind", [ENTITY, RELATION])
@pytest.mark.parametrize("seed", range(6))
def test_records_kept_one_by_one_equal_records_merged_at_once(kind, seed) -> None:
    rng = random.Random(seed)
    make = _entity_record if kind == ENTITY else _relation_record
    attrs = new_item(kind)
    for step in range(120):
        chunk = f"c{rng.randrange(40):02d}"
        if attrs["sources"] and rng.random() < 0.35:
            drop_record(attrs, rng.choice(sorted(attrs["sources"])))
        else:
            add_record(attrs, chunk, make(rng))  # a chunk seen again replaces its record
        assert {k: attrs[k] for k in _expected(kind, attrs["sources"])} == _expected(kind, attrs["sources"]), step
        assert record_count(attrs) == len(attrs["sources"])
    assert len(attrs["tally"]["heads"]) <= MAX_MERGED_DESCRIPTIONS


def test_a_partial_item_reads_its_other_records_only_for_a_shown_description() -> None:
    complete = new_item(ENTITY)
    for i in range(12):
        add_record(complete, f"c{i:02d}", {"name": "Vega", "type": "ORG", "description": f"note {i}"})
    stored = {c: dict(r) for c, r in complete["sources"].items()}
    partial = {**complete, "sources": {c: stored[c] for c in ("c03", "c10")}, PARTIAL: []}
    loads = []

    def loader() -> None:
        loads.append(1)
        for chunk, record in stored.items():
            if chunk not in partial[PARTIAL]:
                partial["sources"].setdefault(chunk, record)
        del partial[PARTIAL]

    drop_record(partial, "c10", loader)  # not among the first eight descriptions: nothing read
    assert not loads and partial["description"] == complete["description"]
    drop_record(partial, "c03", loader)  # a shown one: the ninth takes its place, read from the store
    assert loads == [1]
    del stored["c10"], stored["c03"]
    assert {k: partial[k] for k in ("tally", "description")} == {k: _expected(ENTITY, stored)[k]
                                                                  for k in ("tally", "description")}


def _hub_docs(n: int) -> list[Document]:
    return [Document(id=f"log-{i:02d}", text=f"Report {i}. The Orion Relay Station logged signal number {i} "
                                             f"from the Kestrel Array at dawn, and technician Mara Quell{i} noted it.")
            for i in range(n)]


def test_a_hub_entity_is_one_short_row_and_deletes_match_a_networkx_build(tmp_path, embedder) -> None:
    docs = _hub_docs(40)
    stored = MiniRAGIndex(tmp_path / "sqlite", embedder=embedder, graph_backend="sqlite")
    stored.insert(docs)
    store = stored.graph_store
    hub, rows = max(((e, len(a)) for e, a in store._rows("SELECT id, attrs FROM nodes WHERE kind = 'entity'")),
                    key=lambda r: (len(store.entity(r[0])["source_chunks"]), r))
    assert len(store.entity(hub)["source_chunks"]) == 40
    assert "sources" not in json.loads(store._rows("SELECT attrs FROM nodes WHERE id = ?", hub)[0][0])
    # the tally and eight descriptions (twice: merged and with their chunks), however many chunks
    # mention it; all 40 descriptions alone would be about 4,800 characters
    assert rows < 3000
    new = store.working_graph(["chunk-not-yet-stored"], [hub])
    assert new.nodes[hub]["sources"] == {} and PARTIAL in new.nodes[hub]  # nothing of the 40 read
    # delete the documents whose descriptions are shown (the first chunks in id order) and others
    head_chunks = {c for c, _ in json.loads(store._rows("SELECT attrs FROM nodes WHERE id = ?", hub)[0][0])
                   ["tally"]["heads"]}
    owners = [d.id for d in docs if set(stored.registry.chunk_ids(d.id)) & head_chunks][:3] + ["log-05", "log-17"]
    stored.delete(owners)
    local = MiniRAGIndex(tmp_path / "networkx", embedder=embedder)
    local.insert([d for d in docs if d.id not in owners])
    assert _graph_state(stored) == _graph_state(local)


def test_a_snapshot_written_before_tallies_reopens_with_them(tmp_path) -> None:
    """Graphs saved by an earlier version (records, no tally) get their tallies on load."""
    import networkx as nx

    from minirag_core.storage.networkx_store import NetworkXGraphStore

    old = nx.Graph()
    sources = {f"c{i:02d}": {"name": "Vega", "type": "ORG", "description": f"note {i}"} for i in range(12)}
    old.add_node("VEGA", kind="entity", name="Vega", type="ORG", sources=sources, source_chunks=sorted(sources),
                 description=" | ".join(f"note {i}" for i in range(12)))
    old.add_node("LYRA", kind="entity", name="Lyra", type="ORG", description="",
                 sources={"c00": {"name": "Lyra", "type": "ORG", "description": ""}}, source_chunks=["c00"])
    old.add_edge("LYRA", "VEGA", kind="relation", weight=3.0, keywords="b, a", description="x", source_chunks=["c00"],
                 sources={"c00": {"weight": 3.0, "keywords": "b, a", "description": "x"}})
    writer = NetworkXGraphStore(tmp_path / "graph.json")
    writer.graph = old
    writer.save()
    graph = NetworkXGraphStore(tmp_path / "graph.json").graph
    vega, edge = graph.nodes["VEGA"], graph.edges["LYRA", "VEGA"]
    assert "source_chunks" not in vega and vega["tally"] == tally_of(ENTITY, sources)
    assert vega["description"] == " | ".join(f"note {i}" for i in range(MAX_MERGED_DESCRIPTIONS))
    assert (edge["weight"], edge["keywords"], edge["tally"]["n"]) == (3.0, "a, b", 1)
