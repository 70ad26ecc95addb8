"""What one embedding call costs, by path (the small-batch encoder on ONNX Runtime or NumPy, or
torch) and threads, on the texts an index embeds: entity names, relation texts and chunk windows
of a built workdir; and what a query-sized call costs (a window's first sentence with five names).

    .venv/bin/python benchmarks/scale/bench_embed.py --workdir /tmp/w/lihuaworld.workdir

Prints wall and CPU seconds per 1000 texts for each (kind, path, threads, torch batch size), and
milliseconds per query-sized call for each path on one thread; all variants run in one process,
interleaved over ``--repeat`` rounds, so machine load hits them alike.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import machine_info  # noqa: E402


def workdir_texts(workdir: Path, n: int, seed: int = 0) -> dict[str, list[str]]:
    """Up to ``n`` entity names, relation texts and chunk windows from a workdir's graph."""
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.embedding.windows import text_windows
    from minirag_core.search.graph_vectors import chunk_vector_text, relation_text, vector_relations
    from minirag_core.storage.networkx_store import NetworkXGraphStore

    store = NetworkXGraphStore(workdir / "graph.json")
    g = store.graph
    embedder = SentenceTransformerEmbedder()
    rng = random.Random(seed)
    names = [g.nodes[e]["name"] for e in store.entity_ids()]
    relations = [relation_text(g, u, v) for u, v in vector_relations(store)]
    windows = [w for c in store.chunk_ids() for w in text_windows(embedder, chunk_vector_text(g, c))]
    return {kind: rng.sample(texts, min(n, len(texts)))
            for kind, texts in (("names", names), ("relations", relations), ("windows", windows))}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--n", type=int, default=128, help="texts per kind (one call each)")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)

    import numpy as np
    import torch
    from threadpoolctl import threadpool_limits

    from minirag_core.embedding.bert_encoder import BertEncoder
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder, _load

    texts = workdir_texts(args.workdir, args.n)
    embedder = SentenceTransformerEmbedder()
    encoders = {runtime: BertEncoder(embedder.model_path, embedder.max_tokens, runtime)
                for runtime in ("onnxruntime", "numpy")}
    model = _load(embedder.model_path)

    def torch_encode(size: int):
        def encode(batch: list[str]) -> np.ndarray:
            return model.encode(batch, batch_size=size, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
        return encode

    paths = [(runtime, encoder.encode) for runtime, encoder in encoders.items()]
    paths += [(f"torch/{size}", torch_encode(size)) for size in (16, 64)]
    queries = [[window.split(". ")[0][:200], *texts["names"][5 * i:5 * i + 5]]
               for i, window in enumerate(texts["windows"][:50])]
    query_ms: dict[str, list[float]] = {}
    variants = {(path, threads): fn for path, fn in paths for threads in (1, 2)}
    seconds: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    for _ in range(args.repeat):
        for kind, batch in texts.items():
            for (path, threads), fn in variants.items():
                torch.set_num_threads(threads)
                with threadpool_limits(limits=threads):
                    wall, cpu = time.perf_counter(), time.process_time()
                    fn(batch)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                seconds.setdefault((kind, path, threads), []).append((wall, cpu))
        torch.set_num_threads(1)
        with threadpool_limits(limits=1):
            for path, fn in paths[:3]:  # the two small-batch runtimes and torch, one call per query
                for query in queries:
                    wall = time.perf_counter()
                    fn(query)
                    query_ms.setdefault(path, []).append(1000 * (time.perf_counter() - wall))
    result = {}
    print(f"seconds per 1000 texts (median of {args.repeat}); load {machine_info()['load_average']}")
    for (kind, path, threads), runs in seconds.items():
        scale = 1000 / len(texts[kind])
        wall = float(np.median([w for w, _ in runs])) * scale
        cpu = float(np.median([c for _, c in runs])) * scale
        result[f"{kind}/{path}/{threads}"] = {"wall": wall, "cpu": cpu}
        print(f"  {kind:10s} {path:8s} threads={threads}  wall {wall:7.2f}  cpu {cpu:7.2f}")
    for path, ms in query_ms.items():
        result[f"query/{path}/1"] = {"p50_ms": float(np.median(ms))}
        print(f"  query      {path:11s} threads=1  p50 {np.median(ms):6.1f} ms per call")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
