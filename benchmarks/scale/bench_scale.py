"""Scale benchmark: index throughput, peak memory, bytes on disk and query latency per mode
on corpora of 1k, 10k (and 100k) chunks built from the development sets.

    nice -n 10 .venv/bin/python benchmarks/scale/bench_scale.py --sizes 1000,10000 [--out DIR] [--reuse]

Each size runs in its own subprocess (so peak RSS is that size's), on a fresh workdir with
the embedded default (offline extractor, bundled embedding model; ``--graph-backend sqlite``
for the graph in a SQLite file, ``--chroma-server`` for the vectors on a local ``chroma run``, whose
peak RSS is then recorded beside this process's). Corpora: the passages
of the development sets, then replicas with perturbed names and ids (``scale_corpus``).
Questions: test-half questions whose evidence is in the smallest corpus, the same at every
size; modes interleave per question. Writes ``scale.json`` and ``scale.png`` (log axes).

Where extraction would take hours on a shared machine: ``--replica-extractions`` gives each
replica its original's extraction, perturbed (the extractor runs on originals only), and
``--seed-extractions FILE`` starts from an earlier build's ``extractions.jsonl``; the JSON
then keeps ``seconds_extracting`` apart, and ``chunks_per_s_excluding_extraction`` compares sizes.
Where encoding would too (100k chunks): ``--replica-vectors`` gives each replica its original's
vector, turned by noise (``replica_vectors``), and ``chunks_per_s_excluding_extraction_and_embedding``
compares sizes (encoding is timed at every size and costs the same per chunk at any size; a
``--resume``d build first encodes its originals again in a scratch index, untimed, to learn them).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.servers import ChromaServer  # noqa: E402
from benchmarks.common import (  # noqa: E402
    BENCH_DIR, SystemCaches, configure_threads, current_rss_mb, dir_bytes, machine_info, peak_rss_mb, safe_rmtree,
)
from benchmarks.quality.metrics import percentile  # noqa: E402
from benchmarks.scale.replica_vectors import ReplicaEmbedder  # noqa: E402
from benchmarks.scale.scale_corpus import (  # noqa: E402
    REPLICA_ID, ReplicaExtractor, TimedExtractor, base_passages, pick_questions, scaled_corpus,
)

MODES = ("mini", "light", "naive")
TOP_K = 5
DEFAULT_OUT = BENCH_DIR / "results" / "scale"
SLICE = 2000  # documents per insert call (a build can stop between slices, see --max-seconds)


def _questions(smallest: int, n: int):
    base, questions = base_passages()
    present = {d.id for d in scaled_corpus(smallest, base)}
    usable = [q for q in questions if q.evidence and set(q.evidence) <= present]
    return base, pick_questions(usable, n)


def run_one(size: int, workdir: Path, n_questions: int, smallest: int, reuse: bool = False,
            replica_extractions: bool = False, seed_extractions: Path | None = None,
            torch_queries: bool = False, graph_backend: str | None = None, resume: bool = False,
            max_seconds: float | None = None, server: ChromaServer | None = None,
            replica_vectors: bool = False) -> dict:
    """Build a fresh index of ``size`` documents and time its queries (runs in a subprocess).
    ``resume``: continue the workdir's build (documents already indexed are skipped);
    ``max_seconds``: stop inserting after the slice that passes it and time what is built;
    ``server``: the vectors on this Chroma server (its RSS is recorded beside this process's);
    ``replica_vectors``: replicas take their original's vector, turned (``replica_vectors``)."""
    from minirag_core.indexing.index import MiniRAGIndex

    base, questions = _questions(smallest, n_questions)
    previous = workdir.parent / f"scale-{size}.json"
    if reuse and previous.exists():  # time the queries again on the index already built
        build = json.loads(previous.read_text())["build"]
        build["reused"] = True
        return _time_queries(size, workdir, questions, build, torch_queries, server)
    docs = scaled_corpus(size, base)
    if not resume:
        safe_rmtree(workdir)
    if seed_extractions is not None:  # extraction cache of an earlier build: extraction not timed
        workdir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(seed_extractions, workdir / "extractions.jsonl")
    t0 = time.perf_counter()
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    embedder = ReplicaEmbedder(SentenceTransformerEmbedder(), reuse=replica_vectors)  # times every encoding
    index = MiniRAGIndex(workdir, embedder=embedder, graph_backend=graph_backend,
                         chroma_url=server.url if server else None)
    index.embedder.embed(["warm-up"])  # model load and the typer's type vectors: once per
    index._typer().type_vectors  # process, not part of the per-chunk throughput
    replicas = ReplicaExtractor(index.extractor)
    extractor = index.extractor = TimedExtractor(replicas if replica_extractions else replicas.inner, embedder)
    relearn_t0 = time.perf_counter()
    if resume and replica_extractions:  # the originals' extractions, from the cache of the earlier run
        replicas.remember(index, [d for d in docs if not REPLICA_ID.match(d.id)])
        if replica_vectors:
            _relearn_originals(embedder, replicas, base, workdir.parent / f"{workdir.name}.originals")
    relearned = {"vectors_encoded_to_relearn": embedder.encoded, "seconds_relearning": time.perf_counter() - relearn_t0}
    embedder.seconds, embedder.encoded, embedder.reused = 0.0, 0, 0
    t1, cpu1 = time.perf_counter(), time.process_time()  # CPU time: less swayed by other jobs
    chunks, done, progress = 0, 0, []
    while done < len(docs) and (max_seconds is None or time.perf_counter() - t1 < max_seconds):
        chunks += index.insert(docs[done:done + SLICE]).chunks  # indexed documents are skipped
        done += SLICE
        embedder.learning = done < len(base)  # every original seen: remember no more texts
        progress.append({"seconds": time.perf_counter() - t1, "cpu_seconds": time.process_time() - cpu1,
                         "chunks_this_run": chunks,
                         "seconds_extracting": extractor.seconds, "seconds_embedding": embedder.seconds,
                         "seconds_embedding_in_extraction": extractor.embedding_seconds,
                         "rss_mb": current_rss_mb(), "peak_rss_mb": peak_rss_mb(),
                         **({"server_rss_mb": server.rss_mb()} if server else {})})
        print(f"[{size}] {json.dumps(progress[-1])}", file=sys.stderr, flush=True)
    t2 = time.perf_counter()
    rest = t2 - t1 - extractor.seconds
    embedding = embedder.seconds - extractor.embedding_seconds  # the extractor's own embedding is in its seconds
    build = {"documents": len(docs), "chunks": chunks, "complete": done >= len(docs), "resumed": resume,
             "seconds_open_and_warm_up": t1 - t0,
             "seconds_insert": t2 - t1, "cpu_seconds_insert": time.process_time() - cpu1,
             "chunks_per_s": chunks / max(t2 - t1, 1e-9),
             "seconds_extracting": extractor.seconds, "chunks_per_s_excluding_extraction": chunks / max(rest, 1e-9),
             "seconds_embedding": embedder.seconds, "seconds_embedding_in_extraction": extractor.embedding_seconds,
             "chunks_per_s_excluding_extraction_and_embedding": chunks / max(rest - embedding, 1e-9),
             "replica_extractions_reused": getattr(extractor.inner, "reused", 0),
             "replica_vectors": replica_vectors, "vectors_reused": embedder.reused,
             "vectors_encoded": embedder.encoded,
             "extraction_cache_seeded": seed_extractions is not None, **(relearned if resume else {}),
             "peak_rss_mb_after_index": peak_rss_mb(), "bytes_on_disk": dir_bytes(workdir),
             "stats": index.stats(), "graph_store": type(index.graph_store).__name__, "progress": progress}
    print(f"[{size}] indexed {chunks} chunks in {t2 - t1:.1f}s ({build['chunks_per_s']:.1f} chunks/s)",
          file=sys.stderr, flush=True)
    return _time_queries(size, workdir, questions, build, torch_queries, server)


class _RememberedExtractor:
    """The originals' extractions a ``ReplicaExtractor`` remembered, for a scratch index."""

    def __init__(self, replicas: ReplicaExtractor) -> None:
        self.replicas = replicas
        self.name = replicas.name

    def extract(self, chunks, *, show_progress: bool = False):
        return [self.replicas.seen(chunk) for chunk in chunks]

    async def aextract(self, chunks, *, show_progress: bool = False):
        return self.extract(chunks)


def _relearn_originals(embedder: ReplicaEmbedder, replicas: ReplicaExtractor, originals: list, scratch: Path) -> None:
    """A resumed build indexed its originals in an earlier process: index them again in a
    scratch index (networkx, in-process vectors; extraction from ``replicas``' memory) so the
    embedder learns their vectors and replicas reuse them as in an uninterrupted build."""
    from minirag_core.indexing.index import MiniRAGIndex

    safe_rmtree(scratch)
    embedder.learning = True
    scratch_index = MiniRAGIndex(scratch, embedder=embedder)
    scratch_index.extractor = _RememberedExtractor(replicas)
    scratch_index.insert(originals)
    del scratch_index
    safe_rmtree(scratch)


def _time_queries(size: int, workdir: Path, questions: list, build: dict, torch_queries: bool = False,
                  server: ChromaServer | None = None) -> dict:
    from minirag_core.indexing.index import MiniRAGIndex

    reopen_t0 = time.perf_counter()
    # queries as a new process would see them: from disk (or the server)
    index = MiniRAGIndex(workdir, chroma_url=server.url if server else None)
    build["seconds_reopen"] = time.perf_counter() - reopen_t0
    if torch_queries:  # a long-running process: queries embedded on torch (loaded once, not timed)
        index.embedder.load_torch()
    first: dict[str, float] = {}
    for mode in MODES:  # warm-up: loads vectors, BM25, type pool; timed as the first query's cost
        t = time.perf_counter()
        index.query(questions[0].question, mode=mode, top_k=TOP_K)
        first[mode] = (time.perf_counter() - t) * 1000
    caches = SystemCaches(index)
    caches.snapshot()
    times: dict[str, list[float]] = {m: [] for m in MODES}
    cpu: dict[str, list[float]] = {m: [] for m in MODES}  # CPU time: less swayed by other jobs
    hits: dict[str, int] = {m: 0 for m in MODES}
    for i, q in enumerate(questions):
        for mode in MODES[i % 3:] + MODES[:i % 3]:
            caches.use(mode)
            t, c = time.perf_counter(), time.process_time()
            result = index.query(q.question, mode=mode, top_k=TOP_K)
            times[mode].append((time.perf_counter() - t) * 1000)
            cpu[mode].append((time.process_time() - c) * 1000)
            hits[mode] += bool(set(q.evidence) & {c.doc_id for c in result.chunks})
    latency = {m: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95), "cpu_p50_ms": percentile(cpu[m], 50),
                   "first_query_ms": first[m], "any_evidence_at_5": hits[m] / len(questions)}
               for m, v in times.items()}
    return {"size": size, "questions": len(questions), "torch_queries": torch_queries, "build": build,
            "latency": latency,
            "peak_rss_mb": max(peak_rss_mb(), build.get("peak_rss_mb_after_index", 0.0)),
            **({"server_peak_rss_mb": server.peak_rss_mb()} if server else {})}


def _chunks(result: dict) -> int:
    """Chunks in the index timed (a resumed or stopped build's total, not this run's share)."""
    return result["build"].get("stats", {}).get("chunks", result["build"]["chunks"])


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [_chunks(r) for r in results]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for mode in MODES:
        for key, style in (("p50_ms", "-o"), ("p95_ms", ":x")):
            left.plot(sizes, [r["latency"][mode][key] for r in results], style, label=f"{mode} {key[:3]}")
    left.set(xscale="log", yscale="log", xlabel="chunks", ylabel="query latency (ms)", title="Query latency")
    left.legend(fontsize=7)
    replica_vectors = any(r["build"].get("replica_vectors") for r in results)  # replicas not encoded:
    key = "chunks_per_s_excluding_extraction_and_embedding" if replica_vectors else "chunks_per_s"  # compare the rest
    right.plot(sizes, [r["build"][key] for r in results], "-o", label="chunks/s")
    right.set(xscale="log", yscale="log", xlabel="chunks", title="Index throughput",
              ylabel="indexing without extraction and encoding (chunks/s)" if replica_vectors
              else "offline indexing (chunks/s)")
    twin = right.twinx()
    twin.plot(sizes, [r["peak_rss_mb"] for r in results], "--s", color="grey", label="peak RSS MB")
    twin.set(yscale="log", ylabel="peak RSS (MB)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes (documents ~ chunks)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--questions", type=int, default=30)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0 = torch's default)")
    p.add_argument("--reuse", action="store_true", help="time the queries again on the indexes already built")
    p.add_argument("--replica-extractions", action="store_true",
                   help="replicas reuse their original's extraction, perturbed (extraction runs on originals only)")
    p.add_argument("--replica-vectors", action="store_true",
                   help="replicas take their original's vector plus noise (the model encodes originals only)")
    p.add_argument("--seed-extractions", type=Path, default=None,
                   help="start each workdir with this extractions.jsonl (cached chunks are not extracted again)")
    p.add_argument("--torch-queries", action="store_true",
                   help="load torch before the queries (a long-running process) instead of the NumPy encoder")
    p.add_argument("--graph-backend", choices=("networkx", "sqlite"), default=None,
                   help="embedded graph store of the new workdirs (default networkx)")
    p.add_argument("--chroma-server", action="store_true",
                   help="vectors on a local Chroma server (chroma run, started per size) instead of in process")
    p.add_argument("--resume", action="store_true",
                   help="continue the builds in --out instead of starting them again (indexed documents are skipped)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="stop inserting once a slice of %d documents ends past this, then time the queries" % SLICE)
    p.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # one size, in a subprocess
    p.add_argument("--smallest", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    args.out.mkdir(parents=True, exist_ok=True)
    if args.one is not None:
        configure_threads(args.threads)
        with contextlib.ExitStack() as stack:
            server_dir = args.out / f"chroma-server-{args.one}"
            if args.chroma_server and not (args.resume or args.reuse) and server_dir.exists():
                shutil.rmtree(server_dir)  # the benchmark's own server data: a fresh build, a fresh server
            server = stack.enter_context(ChromaServer(server_dir)) if args.chroma_server else None
            result = run_one(args.one, args.out / f"work-{args.one}", args.questions, args.smallest or args.one,
                             args.reuse, args.replica_extractions, args.seed_extractions, args.torch_queries,
                             args.graph_backend, args.resume, args.max_seconds, server, args.replica_vectors)
        (args.out / f"scale-{args.one}.json").write_text(json.dumps(result, indent=1))
        return [result]
    results = []
    for size in sizes:
        subprocess.run([sys.executable, __file__, "--one", str(size), "--smallest", str(sizes[0]),
                        "--out", str(args.out), "--questions", str(args.questions), "--threads", str(args.threads)]
                       + (["--reuse"] if args.reuse else [])
                       + (["--torch-queries"] if args.torch_queries else [])
                       + (["--graph-backend", args.graph_backend] if args.graph_backend else [])
                       + (["--resume"] if args.resume else [])
                       + (["--chroma-server"] if args.chroma_server else [])
                       + (["--max-seconds", str(args.max_seconds)] if args.max_seconds is not None else [])
                       + (["--replica-extractions"] if args.replica_extractions else [])
                       + (["--replica-vectors"] if args.replica_vectors else [])
                       + (["--seed-extractions", str(args.seed_extractions)] if args.seed_extractions else []),
                       check=True)
        results.append(json.loads((args.out / f"scale-{size}.json").read_text()))
    report = {"results": results, "machine": machine_info()}
    (args.out / "scale.json").write_text(json.dumps(report, indent=1, default=str))
    plot(results, args.out / "scale.png")
    print("| chunks | chunks/s | peak RSS MB | disk MB | " + " | ".join(f"{m} p50/p95 ms" for m in MODES) + " |")
    print("|---" * (4 + len(MODES)) + "|")
    for r in results:
        b = r["build"]
        cells = [f"{r['latency'][m]['p50_ms']:.1f} / {r['latency'][m]['p95_ms']:.1f}" for m in MODES]
        server = f" (+ server {r['server_peak_rss_mb']:.0f})" if "server_peak_rss_mb" in r else ""
        print(f"| {_chunks(r)} | {b['chunks_per_s']:.1f} | {r['peak_rss_mb']:.0f}{server} | "
              f"{b['bytes_on_disk'] / 1e6:.1f} | " + " | ".join(cells) + " |")
    return results


if __name__ == "__main__":
    main()
