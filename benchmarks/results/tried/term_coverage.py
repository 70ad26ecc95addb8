"""The top chunks chosen to cover the question's words between them (not adopted).

After mini's ranking, the best ``depth`` chunks are picked greedily: each pick maximises its score
(divided by the best) plus ``weight`` x the idf-weighted share of the question's words it adds
to those the earlier picks contain (maximal coverage, as a diversity re-ranker does). Each hop
of a chain answers a different part of the question, so a set that covers more of it should
hold more hops. Run from the repository root after ``benchmarks/run_suite.py`` built its indexes:
``.venv/bin/python benchmarks/results/tried/term_coverage.py '{"weight": [0, 0.2, 0.4], "depth": [10, 20]}'``.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks import devsets  # noqa: E402
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.run_suite import question_group, score  # noqa: E402
from minirag_core.residual import words  # noqa: E402


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
    configure_threads(1)
    grid = json.loads(sys.argv[1])
    for name in ("musique_50", "hotpotqa_100", "lihuaworld"):
        dataset = devsets.load(name)
        questions = [q for q in dataset.half("tune") if q.has_evidence]
        index, _ = open_corpus_index(DEFAULT_OUT / f"{name}.workdir", dataset.documents)
        graph = index.graph_store
        texts = [a.get("text", "") for a in graph.chunks(graph.chunk_ids()).values()]
        df = Counter(w for t in texts for w in set(words(t)))
        idf = {w: math.log(len(texts) / n) for w, n in df.items()}
        results = {q.id: index.query(q.question, mode="mini", top_k=20, token_budget=10**9) for q in questions}
        for values in itertools.product(*grid.values()):
            setting = dict(zip(grid, values))
            records, groups = [], {}
            for q in questions:
                chunks = cover_words(q.question, results[q.id].chunks, idf, setting["weight"], setting["depth"])
                records.append(score(q, [c.doc_id for c in chunks], [c.text for c in chunks]))
                groups.setdefault(question_group(name, q.type), []).append(records[-1])

            def pct(rows, metric):
                return round(100 * sum(r[metric] for r in rows) / len(rows), 1)

            print(name, setting, pct(records, "recall@5"), pct(records, "all_evidence@5"),
                  {g: (pct(v, "recall@5"), pct(v, "all_evidence@5")) for g, v in groups.items()}, flush=True)


if __name__ == "__main__":
    main()
