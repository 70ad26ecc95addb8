"""Incremental graph persistence: snapshot + log reopen to the graph in memory, a torn last
line is ignored, compaction keeps the same graph, and another reader catches up from the log."""

from __future__ import annotations

import json
from functools import partial

import networkx as nx

from minirag_core.graph.heterogeneous import add_entity_record, add_relation_record, drop_entity_record, drop_relation_record
from minirag_core.graph.records import MAX_MERGED_DESCRIPTIONS, record_count
from minirag_core.storage import graph_log
from minirag_core.storage.graph_log import Change
from minirag_core.storage.networkx_store import NetworkXGraphStore


def _state(store: NetworkXGraphStore) -> dict:
    data = nx.node_link_data(store.graph, edges="edges")
    for edge in data["edges"]:
        edge["source"], edge["target"] = sorted((edge["source"], edge["target"]))
    dump = partial(json.dumps, sort_keys=True)
    return {"graph": data["graph"], "nodes": sorted(map(dump, data["nodes"])), "edges": sorted(map(dump, data["edges"]))}


def _add_chunk(store: NetworkXGraphStore, chunk: str, entities: list[str]) -> Change:
    g = store.graph
    g.add_node(chunk, kind="chunk", text=f"text of {chunk}", relations=[])
    for e in entities:
        add_entity_record(g, e, chunk, {"name": e, "type": "", "description": f"{e} in {chunk}"})
        g.add_edge(e, chunk, kind="mention", description=f"{e} in {chunk}")
    for a, b in zip(entities, entities[1:]):
        add_relation_record(g, (a, b), chunk, {"weight": 1.0, "keywords": "", "description": ""})
    g.graph.setdefault("documents", {})[f"doc-{chunk}"] = {"chunks": [chunk]}
    return Change([chunk, *entities], list(zip(entities, entities[1:])), {"documents": [f"doc-{chunk}"]})


def _remove_chunk(store: NetworkXGraphStore, chunk: str) -> Change:
    g = store.graph
    entities = [n for n in g.neighbors(chunk)]
    for e in entities:
        drop_entity_record(g, e, chunk)
    edges = [(a, b) for a, b in list(g.edges) if chunk in g.edges[a, b].get("sources", {})]
    for a, b in edges:
        drop_relation_record(g, (a, b), chunk)
    g.remove_node(chunk)
    for e in entities:
        if record_count(g.nodes[e]) == 0:
            g.remove_node(e)
    del g.graph["documents"][f"doc-{chunk}"]
    return Change([chunk, *entities], edges, {"documents": [f"doc-{chunk}"]})


def test_logged_writes_reopen_to_the_same_graph(tmp_path):
    path = tmp_path / "graph.json"
    store = NetworkXGraphStore(path)
    store.save(_add_chunk(store, "c1", ["A", "B", "C"]))      # first save: a snapshot
    snapshot_size = path.stat().st_size
    store.save(_add_chunk(store, "c2", ["B", "C", "D"]))
    store.save(_add_chunk(store, "c3", ["D", "E"]))
    store.save(_remove_chunk(store, "c2"))
    assert path.stat().st_size == snapshot_size              # later writes only append
    assert path.with_name("graph.log.jsonl").stat().st_size > 0
    reopened = NetworkXGraphStore(path)
    assert _state(reopened) == _state(store)
    assert sorted(reopened.graph.neighbors("D")) == ["E", "c3"]


def test_torn_last_line_is_ignored_and_cut(tmp_path):
    path = tmp_path / "graph.json"
    store = NetworkXGraphStore(path)
    store.save(_add_chunk(store, "c1", ["A", "B"]))
    store.save(_add_chunk(store, "c2", ["B", "C"]))
    before = _state(NetworkXGraphStore(path))
    log = path.with_name("graph.log.jsonl")
    with open(log, "ab") as handle:
        handle.write(b'{"seq": 99, "nodes": [["X", {"ki')    # a crash mid-append
    reopened = NetworkXGraphStore(path)
    assert _state(reopened) == before and not reopened.graph.has_node("X")
    reopened.save(_add_chunk(reopened, "c3", ["C", "D"]))   # the next append cuts the torn line
    assert _state(NetworkXGraphStore(path)) == _state(reopened)


def test_compaction_and_crash_between_snapshot_and_log_truncation(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_log, "MIN_COMPACT_BYTES", 0)
    path = tmp_path / "graph.json"
    store = NetworkXGraphStore(path)
    for i in range(12):
        store.save(_add_chunk(store, f"c{i}", [f"E{i}", f"E{i + 1}", "HUB"]))
    log = path.with_name("graph.log.jsonl")
    assert log.stat().st_size < path.stat().st_size          # folded into the snapshot at least once
    old_log = log.read_bytes()
    store.save()                                             # full snapshot, log emptied
    assert log.stat().st_size == 0
    log.write_bytes(old_log)                                 # as if the crash came before emptying it
    assert _state(NetworkXGraphStore(path)) == _state(store)


def test_another_reader_catches_up_from_the_log(tmp_path):
    path = tmp_path / "graph.json"
    writer, reader = NetworkXGraphStore(path), None
    writer.save(_add_chunk(writer, "c1", ["A", "B"]))
    reader = NetworkXGraphStore(path)
    graph_before = reader.graph
    writer.save(_add_chunk(writer, "c2", ["B", "C"]))
    assert reader.reload_if_changed()
    assert reader.graph is graph_before                      # caught up in place, from the new lines
    assert _state(reader) == _state(writer)
    assert not reader.reload_if_changed()
    writer.save()                                            # a new snapshot: read whole
    assert reader.reload_if_changed() and _state(reader) == _state(writer)


def test_store_without_path_keeps_nothing(tmp_path):
    store = NetworkXGraphStore(None)
    store.save(_add_chunk(store, "c1", ["A"]))
    assert not list(tmp_path.iterdir())


def test_insert_records_log_only_the_new_sources_of_a_hub(tmp_path, monkeypatch):
    """With ``added_chunks``, a hub entity's record holds the new chunks' contributions only
    (its size does not grow with the hub), and replaying it rebuilds the same merged graph."""
    from minirag_core.graph import heterogeneous as graph_ops
    from minirag_core.types import Chunk, ExtractedEntity, ExtractedRelation, ExtractionResult

    monkeypatch.setattr(graph_log, "MIN_COMPACT_BYTES", 1 << 30)  # keep every record in the log
    path = tmp_path / "graph.json"
    store = NetworkXGraphStore(path)
    sizes = []
    for i in range(40):
        chunk = Chunk(f"c{i}", f"d{i}", 0, f"Hub met Person {i}.", 5)
        extraction = ExtractionResult(
            entities=[ExtractedEntity("Hub", "ORG", f"hub as seen in chunk {i}"),
                      ExtractedEntity(f"Person {i}", "PERSON", f"person {i}")],
            relations=[ExtractedRelation("Hub", f"Person {i}", f"met {i}", "meeting"),
                       ExtractedRelation("Hub", "Person 0", f"knows since {i}", "acquaintance")])
        graph_ops.add_chunk(store.graph, chunk, extraction)
        edges = [tuple(e) for e in store.graph.nodes[chunk.id]["relations"]]
        entities = sorted(store.graph.neighbors(chunk.id))  # what the index logs for a chunk
        store.save(Change([chunk.id, *entities], edges, added_chunks=[chunk.id]))
        if i:
            sizes.append(path.with_name("graph.log.jsonl").stat().st_size)
    assert len(store.graph.nodes["HUB"]["sources"]) == 40
    assert store.graph.nodes["HUB"]["description"].count("hub as seen") == MAX_MERGED_DESCRIPTIONS
    record_sizes = [b - a for a, b in zip(sizes, sizes[1:])]
    assert max(record_sizes) < 1.2 * min(record_sizes)  # a full record would grow 40-fold
    reopened = NetworkXGraphStore(path)
    assert _state(reopened) == _state(store)
    reader = NetworkXGraphStore(path)  # another reader catching up from the log gets it too
    assert _state(reader) == _state(store)


def test_settle_folds_a_log_past_its_share_of_the_snapshot(tmp_path):
    path = tmp_path / "graph.json"
    store = NetworkXGraphStore(path)
    store.save(_add_chunk(store, "c0", ["A", *(f"N{i}" for i in range(30)), "F"]))
    log = path.with_name("graph.log.jsonl")
    store.save(_add_chunk(store, "c1", ["F", "G"]))
    assert 0 < log.stat().st_size <= graph_log.SETTLE_RATIO * path.stat().st_size
    store.settle()                                           # a small log stays: the snapshot is not rewritten
    assert log.stat().st_size > 0
    for i in range(2, 12):
        store.save(_add_chunk(store, f"c{i}", [f"X{i}", f"Y{i}", "A"]))
    assert log.stat().st_size > graph_log.SETTLE_RATIO * path.stat().st_size
    store.settle()
    assert log.stat().st_size == 0
    other = NetworkXGraphStore(path)
    assert _state(other) == _state(store)
    store.save(_add_chunk(store, "c9", ["A", "Z"]))          # writes after a settle still log and reopen
    assert other.reload_if_changed() and _state(other) == _state(store)


def test_a_whole_corpus_insert_leaves_no_log_to_replay(tmp_path):
    """Batches after the first are logged; the end of the insert folds them into the snapshot."""
    from minirag_core.indexing.index import MiniRAGIndex
    from tests.stand_ins import HashEmbedder, NameListExtractor

    texts = [f"Dana{i} hired Kai{i} and Lee{i % 7}; Kai{i} met Ola{i % 5}." for i in range(300)]
    wd = tmp_path / "wd"
    index = MiniRAGIndex(wd, embedder=HashEmbedder(), extractor=NameListExtractor())
    appended = []
    real_append = graph_log.GraphFiles.append
    graph_log.GraphFiles.append = lambda self, g, change: (appended.append(1), real_append(self, g, change))[1]
    try:
        index.insert(texts)
    finally:
        graph_log.GraphFiles.append = real_append
    assert len(appended) >= 3                                # batches were logged ...
    log = wd / "graph.log.jsonl"
    assert log.stat().st_size <= graph_log.SETTLE_RATIO * (wd / "graph.json").stat().st_size  # ... and folded
    assert _state(NetworkXGraphStore(wd / "graph.json")) == _state(index.graph_store)
