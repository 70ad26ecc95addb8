"""Dense-only (naive) recall@5 of truncation, mean and max of windows on raw chunk texts: no
index and no extraction, so a quick first look at a set (``sweep_windows.py`` measures every
mode on a built index).

    .venv/bin/python benchmarks/experiments/sweep_windows_raw.py lihuaworld
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import configure_threads  # noqa: E402


def main(name: str) -> dict:
    from minirag_core.indexing.chunking import chunk_document
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.embedding.windows import combine_windows, embed_windows

    configure_threads(1)
    embedder = SentenceTransformerEmbedder()
    data = devsets.load(name)
    chunks = [c for doc in data.documents for c in chunk_document(doc, embedder)]
    texts, docs = [c.text for c in chunks], np.array([c.doc_id for c in chunks])
    trunc = embedder.embed(texts)
    windows, owners = embed_windows(embedder, texts)
    mean = combine_windows(windows, owners, len(texts))
    out: dict = {"chunks": len(texts), "windows": len(owners)}
    for split in ("tune", "test"):
        questions = [q for q in data.questions if q.split == split and q.has_evidence]
        vectors = embedder.embed([q.question for q in questions])
        recall: dict[str, float] = {}
        for variant in ("trunc", "mean", "max"):
            values = []
            for question, vector in zip(questions, vectors):
                if variant == "max":
                    scores = np.full(len(texts), -9.0, dtype=np.float32)
                    np.maximum.at(scores, owners, windows @ vector)
                else:
                    scores = (trunc if variant == "trunc" else mean) @ vector
                top = set(docs[np.argsort(-scores, kind="stable")[:5]])
                wanted = set(question.evidence)
                values.append(len(wanted & top) / len(wanted))
            recall[variant] = round(100 * float(np.mean(values)), 1)
        out[split] = recall
        print(name, split, len(questions), recall, flush=True)
    return out


if __name__ == "__main__":
    main(sys.argv[1])
