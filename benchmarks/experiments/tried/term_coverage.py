"""The top chunks chosen to cover the question's words between them (not adopted).

After mini's ranking, the best ``depth`` chunks are picked greedily: each pick maximises its score
(divided by the best) plus ``weight`` x the idf-weighted share of the question's words it adds
to those the earlier picks contain (maximal coverage, as a diversity re-ranker does). Each hop
of a chain answers a different part of the question, so a set that covers more of it should
hold more hops. Run from the repository root after ``benchmarks/quality/run_suite.py`` built its indexes:
``.venv/bin/python benchmarks/experiments/tried/term_coverage.py '{"weight": [0, 0.2, 0.4], "depth": [10, 20]}'``.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from minirag_core.retrieval.extensions.residual import words  # noqa: E402
from tune_rows import print_tune_rows  # noqa: E402


def cover_words(question: str, chunks: list, idf: dict[str, float], weight: float, depth: int) -> list:
    """``chunks`` (ranked, with ``.score`` and ``.text``) with the first ``depth`` re-picked."""
    wanted = {w: idf[w] for w in set(words(question)) if w in idf}
    total = sum(wanted.values()) or 1.0
    head, tail = chunks[:depth], chunks[depth:]
    peak = max((c.score for c in head), default=1.0) or 1.0
    vocab = [set(words(c.text)) for c in head]
    chosen, covered, left = [], set(), list(range(len(head)))
    while left:
        def gain(i: int) -> float:
            return head[i].score / peak + weight * sum(v for w, v in wanted.items()
                                                       if w in vocab[i] and w not in covered) / total
        pick = max(left, key=gain)
        chosen.append(head[pick])
        covered |= vocab[pick] & wanted.keys()
        left.remove(pick)
    return chosen + tail


def main() -> None:
    def prepare(index, questions):
        graph = index.graph_store
        texts = [a.get("text", "") for a in graph.chunks(graph.chunk_ids()).values()]
        df = Counter(w for t in texts for w in set(words(t)))
        idf = {w: math.log(len(texts) / n) for w, n in df.items()}
        return idf, {q.id: index.query(q.question, mode="mini", top_k=20, token_budget=10**9) for q in questions}

    def rank(index, question, setting, prepared):
        idf, results = prepared
        return cover_words(question.question, results[question.id].chunks, idf, setting["weight"], setting["depth"])

    print_tune_rows(json.loads(sys.argv[1]), rank, prepare)


if __name__ == "__main__":
    main()
