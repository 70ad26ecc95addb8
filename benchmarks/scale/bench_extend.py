"""Index throughput as the corpus grows, measured end to end: the same new documents (offline
extraction and encoding included) inserted into an empty index and into a copy of a large one.

    nice -n 10 .venv/bin/python benchmarks/scale/bench_extend.py --large DIR/work-100000 --start 100000 \
        [--large-server DIR/chroma-server-100000] [--graph-backend sqlite] [--documents 1000] [--out DIR]

The documents are the scale corpus's next ``--documents`` past ``--start`` (perturbed replicas
neither index has seen), so the extractor and the embedding model do their real work. Each
insert runs in its own subprocess (its peak RSS is its own): into an empty index, into a copy of
the large one (copied before the clock starts, deleted after), and into an empty index again,
so the two empty runs bracket the large one on a shared machine. With ``--large-server`` the
vectors go to a local ``chroma run`` (a copy of that server's folder for the large run).
Writes ``extend.json``: chunks/s, CPU seconds, peak RSS and the ratio large / empty.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import (  # noqa: E402
    BENCH_DIR, current_rss_mb, dir_bytes, machine_info, peak_rss_mb, safe_rmtree,
)
from benchmarks.scale.replica_vectors import ReplicaEmbedder  # noqa: E402
from benchmarks.scale.scale_corpus import TimedExtractor, base_passages, scaled_corpus  # noqa: E402
from benchmarks.servers import ChromaServer  # noqa: E402

DEFAULT_OUT = BENCH_DIR / "results" / "scale" / "extend"


def new_documents(start: int, count: int) -> list:
    """The scale corpus's documents ``start .. start + count``."""
    base, _ = base_passages()
    return scaled_corpus(start + count, base)[start:]


def insert_once(workdir: Path, docs: list, graph_backend: str | None, server_dir: Path | None) -> dict:
    """Open ``workdir``, insert ``docs`` with the real extractor and embedder, time it."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.indexing.index import MiniRAGIndex

    server = ChromaServer(server_dir) if server_dir is not None else None
    if server is not None:
        server.start()
    try:
        t0 = time.perf_counter()
        embedder = ReplicaEmbedder(SentenceTransformerEmbedder(), reuse=False)  # encodes everything, timed
        index = MiniRAGIndex(workdir, embedder=embedder, graph_backend=graph_backend,
                             chroma_url=server.url if server else None)
        before = index.stats()
        index.embedder.embed(["warm-up"])  # model load and type vectors: once per process
        index._typer().type_vectors
        extractor = index.extractor = TimedExtractor(index.extractor, embedder)
        embedder.seconds, embedder.encoded = 0.0, 0
        rss_before = current_rss_mb()
        t1, cpu1 = time.perf_counter(), time.process_time()
        chunks = index.insert(docs).chunks
        seconds, cpu = time.perf_counter() - t1, time.process_time() - cpu1
        embedding = embedder.seconds - extractor.embedding_seconds
        rest = seconds - extractor.seconds - embedding
        return {"chunks_before": before["chunks"], "chunks": chunks, "seconds_open_and_warm_up": t1 - t0,
                "seconds_insert": seconds, "cpu_seconds_insert": cpu, "chunks_per_s": chunks / seconds,
                "seconds_extracting": extractor.seconds, "seconds_embedding": embedder.seconds,
                "seconds_embedding_in_extraction": extractor.embedding_seconds,
                "vectors_encoded": embedder.encoded,
                "chunks_per_s_excluding_extraction_and_embedding": chunks / max(rest, 1e-9),
                "rss_mb_before_insert": rss_before, "peak_rss_mb": peak_rss_mb(),
                **({"server_peak_rss_mb": server.peak_rss_mb()} if server else {}),
                "stats_after": index.stats(), "graph_store": type(index.graph_store).__name__}
    finally:
        if server is not None:
            server.stop()


def _copy(source: Path, target: Path) -> float:
    t = time.perf_counter()
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    return time.perf_counter() - t


def run(args: argparse.Namespace) -> dict:
    """The three inserts (empty, large, empty), each in a subprocess; then the ratios."""
    runs = []
    for label in ("empty", "large", "empty-again"):
        workdir = args.out / f"work-{label}"
        server_dir = args.out / f"chroma-server-{label}" if args.large_server else None
        safe_rmtree(workdir)
        if server_dir is not None and server_dir.exists():
            shutil.rmtree(server_dir)
        copy_seconds = 0.0
        if label == "large":
            copy_seconds = _copy(args.large, workdir)
            if server_dir is not None:
                copy_seconds += _copy(args.large_server, server_dir)
        cmd = [sys.executable, __file__, "--one", str(workdir), "--start", str(args.start),
               "--documents", str(args.documents), "--out", str(args.out)]
        cmd += ["--graph-backend", args.graph_backend] if args.graph_backend else []
        cmd += ["--server-dir", str(server_dir)] if server_dir is not None else []
        subprocess.run(cmd, check=True)
        result = json.loads((workdir.parent / f"{workdir.name}.json").read_text())
        result.update(label=label, seconds_copying_untimed=copy_seconds, bytes_on_disk=dir_bytes(workdir))
        runs.append(result)
        print(f"[{label}] {json.dumps({k: v for k, v in result.items() if k != 'stats_after'})}",
              file=sys.stderr, flush=True)
        safe_rmtree(workdir)
        if server_dir is not None:
            shutil.rmtree(server_dir, ignore_errors=True)
    empty = [r for r in runs if r["label"] != "large"]
    large = next(r for r in runs if r["label"] == "large")
    ratios = {key: {"large": large[key], "empty_runs": [r[key] for r in empty],
                    "ratio_to_each_empty_run": [large[key] / r[key] for r in empty]}
              for key in ("chunks_per_s", "chunks_per_s_excluding_extraction_and_embedding")}
    ratios["cpu_per_chunk"] = {"large": large["cpu_seconds_insert"] / large["chunks"],
                               "empty_runs": [r["cpu_seconds_insert"] / r["chunks"] for r in empty]}
    return {"start": args.start, "documents": args.documents, "large_source": str(args.large),
            "runs": runs, "ratios": ratios, "machine": machine_info()}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--large", type=Path, help="workdir of a large index (copied, never written)")
    p.add_argument("--large-server", type=Path, default=None, help="its Chroma server folder (copied)")
    p.add_argument("--start", type=int, required=True, help="documents in the large index (new ones follow)")
    p.add_argument("--documents", type=int, default=1000)
    p.add_argument("--graph-backend", choices=("networkx", "sqlite"), default=None,
                   help="graph store of the empty index (the large copy keeps its own)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--one", type=Path, default=None, help=argparse.SUPPRESS)  # one insert, in a subprocess
    p.add_argument("--server-dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.one is not None:
        result = insert_once(args.one, new_documents(args.start, args.documents), args.graph_backend, args.server_dir)
        (args.one.parent / f"{args.one.name}.json").write_text(json.dumps(result, indent=1))
        return result
    if args.large is None:
        p.error("--large is required")
    report = run(args)
    (args.out / "extend.json").write_text(json.dumps(report, indent=1, default=str))
    for key, value in report["ratios"].items():
        print(key, json.dumps(value))
    return report


if __name__ == "__main__":
    main()
