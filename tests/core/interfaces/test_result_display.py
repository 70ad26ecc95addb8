"""What a user reads from a result: each reasoning path once, strongest first, and no internal
chunk id in any printed line or JSON field of a path."""

from __future__ import annotations

import json
import re

from minirag_core.interfaces.cli_commands import print_result
from minirag_core.retrieval.extensions.bridging import Bridge, bridge_label
from minirag_core.types import QueryMapping, ReasoningPath, RetrievalResult, ScoredChunk

SOURCE = "chunk-285357fb0c1d4e2a9b7f"  # an internal chunk id, as the index makes them
PATH_LINE = re.compile(r"^\s+(\d+\.\d{3})  (.+)  \((.+)\)$")


def _result() -> RetrievalResult:
    docs = {SOURCE: "docs/api.rst"}
    # one bridge entity reaching five chunks: five bridges from the same chunk through API
    bridges = [ReasoningPath(bridge_label(Bridge(SOURCE, "API", f"chunk-target{i}", 0.185), docs), ["API"], 0.185)
               for i in range(5)]
    paths = [ReasoningPath("client", ["CLIENT", "SESSION"], 0.3),
             *bridges[:2],
             ReasoningPath("client", ["CLIENT", "SETTINGS", "TIMEOUT"], 0.9, specificity=0.5),  # 0.45
             ReasoningPath("client", ["CLIENT", "SESSION"], 0.2),  # the same path, weaker: shown once
             *bridges[2:],
             ReasoningPath("API", ["API"], 0.7, specificity=0.1),  # a hub: 0.07, last
             ReasoningPath(bridge_label(Bridge("API", "API", "chunk-target9", 0.6), docs), ["API"], 0.6)]
    chunk = ScoredChunk(SOURCE, "docs/api.rst", "The API client opens a session.", 0.8, 12,
                        entities=["API", "CLIENT"])
    return RetrievalResult("How does the client time out?", "mini", [chunk],
                           mapping=QueryMapping(["client"], ["CONCEPT"]), paths=paths)


def test_printed_paths_are_distinct_strongest_first_and_name_no_chunk(capsys) -> None:
    print_result(_result(), as_json=False)
    out = capsys.readouterr().out
    lines = [m.groups() for m in map(PATH_LINE.match, out.splitlines()) if m]
    assert len(lines) == 5 and "reasoning paths: 5 of 5" in out
    scores = [float(score) for score, _, _ in lines]
    assert scores == sorted(scores, reverse=True) == [0.6, 0.45, 0.3, 0.185, 0.07]
    assert len({(nodes, origin) for _, nodes, origin in lines}) == len(lines)
    assert ("API", "bridge from docs/api.rst") in [(nodes, origin) for _, nodes, origin in lines]
    assert ("CLIENT -> SESSION", "from query entity 'client'") in [(nodes, origin) for _, nodes, origin in lines]
    assert SOURCE not in out.split("reasoning paths:")[1] and "chunk-" not in out.split("reasoning paths:")[1]


def test_json_paths_are_the_same_list_and_name_no_chunk() -> None:
    result = _result()
    paths = json.loads(result.to_json())["paths"]
    assert [(p["query_entity"], p["nodes"]) for p in paths] == [(p.query_entity, p.nodes) for p in result.ranked_paths()]
    assert len(paths) == 5 and [p["weighted_score"] for p in paths] == sorted((p["weighted_score"] for p in paths),
                                                                             reverse=True)
    assert not any("chunk-" in json.dumps(p) for p in paths)


def test_context_and_explanations_list_each_path_once() -> None:
    result = _result()
    context = result.to_context()
    assert context.count("bridge from docs/api.rst,API,") == 1 and "chunk-2853" not in context.split("Sources")[0]
    explained = result.explain(SOURCE).paths
    assert len(explained) == len({(p.query_entity, tuple(p.nodes)) for p in explained}) == 5


def test_a_bridge_from_a_chunk_without_a_document_names_no_id() -> None:
    assert bridge_label(Bridge(SOURCE, "API", "t", 0.5), {}) == "bridge from another passage"
    assert bridge_label(Bridge(SOURCE, "API", "t", 0.5), {SOURCE: SOURCE}) == "bridge from another passage"
    assert bridge_label(Bridge("API", "API", "t", 0.5), {}) == "bridge from query entity API"
