"""What the graph costs over the dense index a user would otherwise build, on three text shapes.

    PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_ingest.py                 # all shapes
    PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_ingest.py --shapes docs --limit 10
    PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_ingest.py --shapes docs --workers 1,2
    PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_ingest.py --conditions pinned,default

Per shape, the same documents go through (a) ``MiniRAGIndex.insert`` (offline extraction, graph,
entity / relation / chunk vectors, saves) and (b) a dense-only index: the same chunks, embedded as
the same windows by the same model and threads into embedded Chroma (``VectorIndex`` over
``ChromaVectorStore``, as a plain vector index would store them), on sentence-transformers' torch
model as a user's vector index would run it ((a) embeds on ONNX Runtime where installed). Runs interleave (b, a, a, b, ...)
so machine load hits both alike; the figures are kchar/s of each and the ratio of their times
(min and median over ``--repeat``), and the profile of (a)'s last run: exclusive seconds per phase
(``ingest_profile.py``). Shapes: chat (LiHuaWorld sessions), passages (HotpotQA-100), docs (the
Markdown pages of ``pydantic_docs/corpus``, read as ``minirag index`` reads a folder).
Conditions: ``pinned`` (the default): torch on ``--threads`` threads, the ``--workers`` given;
``default``: both systems as a user runs them, torch at its default threads and ``MiniRAGIndex``
at its default workers (one per core; the pool's start-up counts in (a)'s time), and beside it
the ``--workers`` counts given, if any (``--workers 1``: the same build in one process). With both,
a table at the end sets each shape's figures under the two conditions beside each other.
Model loads (torch, spaCy) happen once before the first timed run. After each (a) build, the
first light-mode query is timed on its own (the build embedded the relation vectors it searches,
``indexing/relation_vectors.py``; before that, this query embedded them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import configure_threads, machine_info  # noqa: E402
from benchmarks.scale.ingest_profile import PhaseTimer  # noqa: E402

SHAPES = {"chat": "lihuaworld", "passages": "hotpotqa_100", "docs": "pydantic_docs"}


def load_shape(shape: str, root: Path) -> list[Any]:
    """The documents of one shape: a development set, or a folder of Markdown pages."""
    from minirag_core.types import Document

    name = SHAPES[shape]
    if shape == "docs":
        from minirag_core.indexing.file_reading import collect_files, read_document

        folder = root / name / "corpus"
        docs = []
        for path in collect_files([folder]).readable:
            text, _ = read_document(path)
            if text is not None:
                rel = path.relative_to(folder).as_posix()
                docs.append(Document(id=rel, text=text, metadata={"source": rel}))
        return docs
    from benchmarks.quality import devsets

    return devsets.load(name, root).documents


def new_embedder(onnx_batches: bool = True) -> Any:
    """A fresh embedder (its own LRU of short texts) over the process's loaded model;
    ``onnx_batches=False``: long texts on sentence-transformers' torch model, as a user's plain
    vector index would embed them."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(onnx_batches=onnx_batches)
    embedder.load_torch()
    return embedder


def warm_up() -> None:
    from minirag_core.extraction.nlp import load_model

    for onnx_batches in (True, False):
        new_embedder(onnx_batches).embed(["warm up " * 50] * 4 + ["warm"] * 2)
    load_model()


def build_dense(docs: list[Any], workdir: Path) -> dict[str, Any]:
    """(b): the same chunks and windows into embedded Chroma, 64 chunks per write like (a)."""
    from minirag_core.indexing.chunking import iter_chunks
    from minirag_core.search.vectors import CHUNKS, VectorIndex
    from minirag_core.storage.chroma_store import ChromaVectorStore

    embedder = new_embedder(onnx_batches=False)
    timer = PhaseTimer()
    start = time.perf_counter()
    vectors = VectorIndex(ChromaVectorStore(workdir / "chroma"), embedder)
    with timer.installed(embedder, vectors.store):
        batch: list[Any] = []

        def flush() -> None:
            with timer.phase("vectors: chunks"):
                vectors.upsert(CHUNKS, [c.id for c in batch], [c.text for c in batch],
                               [{"doc_id": c.doc_id} for c in batch])
            batch.clear()

        chunks = 0
        for doc in docs:
            for chunk in timer.wrap(iter_chunks, "chunking")(doc, embedder):
                batch.append(chunk)
                chunks += 1
                if len(batch) >= 64:
                    flush()
        if batch:
            flush()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "chunks": chunks, "profile": timer.rows(seconds)}


def build_minirag(docs: list[Any], workdir: Path, workers: int | None = 1) -> dict[str, Any]:
    """(a): ``MiniRAGIndex.insert`` of the documents into a fresh workdir (``workers`` None: the
    index's default), then ``close`` (its workers stop)."""
    from minirag_core.indexing.index import MiniRAGIndex

    embedder = new_embedder()
    timer = PhaseTimer()
    start = time.perf_counter()
    with timer.phase("open index"):
        index = MiniRAGIndex(workdir, embedder=embedder, workers=workers)
    with timer.installed(embedder, index.vectors.store), timer.phase("insert (rest: batching, waiting on extraction)"):
        index.insert(docs)
    with timer.phase("close (workers stop)"):
        index.close()
    seconds = time.perf_counter() - start
    stats = index.stats()
    state = index_state(index)
    light = time.perf_counter()  # light mode's relation vectors, embedded by its first query (not in (a)'s time)
    index.query("How are the first two things this corpus names related?", mode="light")
    light = time.perf_counter() - light
    return {"seconds": seconds, "chunks": stats["chunks"], "stats": stats, "profile": timer.rows(seconds),
            "state": state, "first_light_query": light, "workers": index.workers.count}


def index_state(index: Any) -> tuple[str, dict[str, np.ndarray]]:
    """A digest of the whole graph (every node, edge and attribute) and every vector by id."""
    import networkx as nx

    from minirag_core.search.vectors import CHUNKS, ENTITIES, RELATIONS, WINDOWS
    from minirag_core.storage.graph_stores import whole_graph

    data = nx.node_link_data(whole_graph(index.graph_store), edges="edges")
    nodes = sorted(json.dumps(n, sort_keys=True, default=str) for n in data["nodes"])
    edges = sorted(json.dumps({**e, "source": min(e["source"], e["target"]), "target": max(e["source"], e["target"])},
                              sort_keys=True, default=str) for e in data["edges"])
    digest = hashlib.sha256("\n".join(nodes + edges).encode()).hexdigest()
    vectors: dict[str, np.ndarray] = {}
    for collection in (CHUNKS, ENTITIES, RELATIONS, WINDOWS):
        ids = sorted(index.vectors.store.ids(collection))
        found = index.vectors.store.get_embeddings(collection, ids) if ids else {}
        vectors.update({f"{collection}/{i}": np.asarray(v) for i, v in found.items()})
    return digest, vectors


def compare_states(a: tuple[str, dict[str, np.ndarray]], b: tuple[str, dict[str, np.ndarray]]) -> str:
    """Whether two builds hold the same graph, and how far apart their vectors are."""
    same_ids = a[1].keys() == b[1].keys()
    diff = max((float(np.abs(a[1][k] - b[1][k]).max()) for k in a[1].keys() & b[1].keys()), default=0.0)
    return (f"graph {'identical' if a[0] == b[0] else 'DIFFERENT'}, vector ids {'identical' if same_ids else 'DIFFERENT'}"
            f" ({len(a[1])}), largest vector difference {diff:.1e}")


def _summary(times: list[float]) -> str:
    return f"min {min(times):.1f} s, median {statistics.median(times):.1f} s"


def run_shape(shape: str, docs: list[Any], repeat: int, workers: list[int | None]) -> dict[str, Any]:
    chars = sum(len(d.text) for d in docs)
    runs: dict[str, list[dict[str, Any]]] = {"dense": [], **{f"minirag-w{w or 'default'}": [] for w in workers}}
    systems = list(runs)
    for rep in range(repeat):
        order = systems if rep % 2 == 0 else systems[::-1]
        for system in order:
            with tempfile.TemporaryDirectory(prefix="minirag-bench-ingest-") as tmp:
                if system == "dense":
                    found = build_dense(docs, Path(tmp))
                else:
                    count = system.split("-w")[1]
                    found = build_minirag(docs, Path(tmp) / "index", None if count == "default" else int(count))
            runs[system].append(found)
            print(f"  [{shape} run {rep + 1}] {system}: {found['seconds']:.1f} s, {found['chunks']} chunks, "
                  f"{chars / found['seconds'] / 1e3:.2f} kchar/s", flush=True)
    dense = [r["seconds"] for r in runs["dense"]]
    out: dict[str, Any] = {"shape": shape, "documents": len(docs), "chars": chars, "dense_seconds": dense}
    print(f"\n{shape}: {len(docs)} documents, {chars / 1e3:.0f} kchar, {runs['dense'][0]['chunks']} chunks")
    print(f"  (b) dense-only     {chars / min(dense) / 1e3:6.2f} kchar/s  ({_summary(dense)})")
    for system in systems[1:]:
        mini = [r["seconds"] for r in runs[system]]
        ratios = [m / d for m, d in zip(mini, dense)]  # pairs run back to back
        for run in runs[system][:-1]:
            run.pop("state", None)  # only the last build's is compared
        out[system] = {"seconds": mini, "ratios": ratios, "stats": runs[system][-1]["stats"],
                       "profile": runs[system][-1]["profile"]}
        print(f"  (a) {system:<14} {chars / min(mini) / 1e3:6.2f} kchar/s  ({_summary(mini)}); "
              f"a/b ratio min {min(ratios):.2f}, median {statistics.median(ratios):.2f}")
        light = [r["first_light_query"] for r in runs[system]]
        out[system]["first_light_query"] = light
        print(f"      then the first light-mode query: median "
              f"{statistics.median(light):.1f} s; (a) with it / (b): median "
              f"{statistics.median([(m + q) / d for m, q, d in zip(mini, light, dense)]):.2f}")
    if len(workers) > 1:
        base = [r["seconds"] for r in runs[systems[1]]]
        for system in systems[2:]:
            ratios = [b / m for b, m in zip(base, out[system]["seconds"])]
            print(f"  {system} vs {systems[1]}: speed-up min {min(ratios):.2f}, "
                  f"median {statistics.median(ratios):.2f}; index: "
                  + compare_states(runs[systems[1]][-1]["state"], runs[system][-1]["state"]))
    last_a = runs[systems[1]][-1]
    print(f"  profile of (a) {systems[1]} (last run, {last_a['seconds']:.1f} s; exclusive seconds)"
          f" beside (b) ({runs['dense'][-1]['seconds']:.1f} s):")
    dense_profile = dict(runs["dense"][-1]["profile"])
    for name, seconds in last_a["profile"]:
        if seconds >= 0.05:
            beside = f"   (b) {dense_profile[name]:6.1f}" if name in dense_profile else ""
            print(f"    {name:<34} {seconds:7.1f} s  {100 * seconds / last_a['seconds']:5.1f} %{beside}")
    print(f"  graph: {last_a['stats']}; workers {last_a['workers']}", flush=True)
    return out


def print_conditions(results: dict[str, list[dict[str, Any]]]) -> None:
    """Each shape's kchar/s and a/b ratio (medians) under each condition, beside each other."""
    conditions = list(results)
    print("\nshape     " + "".join(f"| {c:<48}" for c in conditions))
    for i, shape_result in enumerate(results[conditions[0]]):
        cells = []
        for condition in conditions:
            found = results[condition][i]
            chars, dense = found["chars"], statistics.median(found["dense_seconds"])
            for system in [k for k in found if k.startswith("minirag-")]:
                mini = statistics.median(found[system]["seconds"])
                cells.append(f"| {system[8:]}: b {chars / dense / 1e3:5.1f}, a {chars / mini / 1e3:5.1f} kchar/s, "
                             f"a/b {statistics.median(found[system]['ratios']):.2f} ")
        print(f"{shape_result['shape']:<10}" + "".join(f"{c:<50}" for c in cells))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="chat,passages,docs", help="comma-separated: chat, passages, docs")
    p.add_argument("--data-root", type=Path, default=None, help="folder of the data sets (default: devsets')")
    p.add_argument("--limit", type=int, default=None, help="first N documents of each shape")
    p.add_argument("--repeat", type=int, default=1, help="runs of each system, interleaved")
    p.add_argument("--workers", default=None,
                   help="MiniRAG index workers to compare, e.g. 1,2 (pinned: 1 unless given; default: also "
                        "these beside the index's default)")
    p.add_argument("--threads", type=int, default=1, help="torch threads for both systems (0: torch's default)")
    p.add_argument("--conditions", default="pinned",
                   help="comma-separated: pinned (--threads, --workers), default (torch's threads, the index's workers)")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = p.parse_args(argv)
    import torch

    from benchmarks.quality import devsets

    default_threads = torch.get_num_threads()
    root = args.data_root or devsets.DATA_ROOT
    given: list[int | None] = [None if w == "default" else int(w) for w in (args.workers or "1").split(",")]
    beside = [w for w in given if w is not None] if args.workers else []
    conditions = {"pinned": (args.threads, given), "default": (default_threads, [None, *beside])}
    warm_up()
    info = machine_info()
    print(f"machine: {info.get('cpu', '')} load {info.get('load_average', '')}")
    by_condition: dict[str, list[dict[str, Any]]] = {}
    for condition in args.conditions.split(","):
        threads, workers = conditions[condition]
        configure_threads(threads or default_threads)
        print(f"\n== {condition}: torch threads {torch.get_num_threads()}, workers {workers} ==", flush=True)
        by_condition[condition] = []
        for shape in args.shapes.split(","):
            docs = load_shape(shape, root)[: args.limit] if args.limit else load_shape(shape, root)
            by_condition[condition].append(run_shape(shape, docs, args.repeat, workers))
    if len(by_condition) > 1:
        print_conditions(by_condition)
    results = [dict(r, condition=c) for c, found in by_condition.items() for r in found]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": results, "machine": info}, indent=1, default=str))
    return {"results": results}


if __name__ == "__main__":
    main()
