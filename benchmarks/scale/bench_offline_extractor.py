"""Time OfflineExtractor over a whole corpus, one chunk per document: LiHuaWorld's session
files (default), a folder of ``*/*.txt`` files, or a ``corpus.json`` (list of ``{"text": ...}``).

Run: PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_offline_extractor.py [corpus_dir | corpus.json]
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
from minirag_core.extraction.offline_extractor import OfflineExtractor
from minirag_core.graph.names import normalize_entity_name
from minirag_core.types import Chunk

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.quality.lihuaworld import default_dir  # noqa: E402

CORPUS = default_dir() / "corpus"


def main() -> None:
    import os

    if os.environ.get("BENCH_TORCH_THREADS"):
        import torch

        torch.set_num_threads(int(os.environ["BENCH_TORCH_THREADS"]))
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS
    if root.suffix == ".json":
        import json

        files = json.loads(root.read_text(encoding="utf-8"))
        chunks = [Chunk(id=str(i), doc_id=str(i), order=0, text=d["text"], n_tokens=0) for i, d in enumerate(files)]
    else:
        files = sorted(root.glob("*/*.txt"))
        chunks = [Chunk(id=str(f.relative_to(root)), doc_id=str(f.relative_to(root)), order=0,
                        text=f.read_text(encoding="utf-8"), n_tokens=0) for f in files]
    t0 = time.perf_counter()
    embedder = SentenceTransformerEmbedder()
    t_load = time.perf_counter() - t0
    extractor = OfflineExtractor(embedder)
    extractor.typer.type_vectors  # embed the type descriptions (once per typer)
    t_r = time.perf_counter()
    extractor._read_chunks(chunks)
    print(f"read_s={time.perf_counter() - t_r:.2f} (spans, recogniser and relations without typing)")
    t1 = time.perf_counter()
    results = extractor.extract(chunks)
    t_extract = time.perf_counter() - t1
    n_ent = sum(len(r.entities) for r in results)
    n_rel = sum(len(r.relations) for r in results)
    distinct = {normalize_entity_name(e.name) for r in results for e in r.entities}
    types = Counter()
    seen = set()
    for r in results:
        for e in r.entities:
            k = normalize_entity_name(e.name)
            if k not in seen:
                seen.add(k)
                types[e.type] += 1
    print(f"files={len(files)} chars={sum(len(c.text) for c in chunks)} chunks_per_s={len(chunks) / t_extract:.1f}")
    print(f"entities={n_ent} distinct_entities={len(distinct)} relations={n_rel}")
    print(f"model_load_s={t_load:.2f} extract_s={t_extract:.2f} (cold typing cache)")
    t2 = time.perf_counter()
    extractor.extract(chunks)
    print(f"extract_again_s={time.perf_counter() - t2:.2f} (warm typing cache)")
    print("distinct entities by type:", dict(types.most_common()))


if __name__ == "__main__":
    main()
