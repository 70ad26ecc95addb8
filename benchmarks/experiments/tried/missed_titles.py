"""Why bridges cannot reach the evidence mini misses (an analysis, not a ranking change).

For each evidence passage missing from mini's top 5 on a tune half, is its subject (title) named
in the text of any of the top 5 chunks? A title that is named but not linked would call for
title matching (a gazetteer of subjects); one that is named nowhere can only be reached through
shared mentions. Run from the repository root after ``benchmarks/quality/run_suite.py`` built its indexes:
``.venv/bin/python benchmarks/experiments/tried/missed_titles.py musique_50``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402


def main() -> None:
    configure_threads(1)
    name = sys.argv[1]
    dataset = devsets.load(name)
    index, _ = open_corpus_index(DEFAULT_OUT / f"{name}.workdir", dataset.documents)
    graph = index.graph_store
    chunks = graph.chunks(graph.chunk_ids())
    by_doc: dict[str, list[str]] = {}
    for chunk, attrs in chunks.items():
        by_doc.setdefault(attrs["doc_id"], []).append(chunk)
    kinds: Counter[str] = Counter()
    for q in (q for q in dataset.half("tune") if q.has_evidence):
        top = [c.chunk_id for c in index.query(q.question, mode="mini", top_k=5).chunks]
        linked = graph.chunk_entities(top)
        for doc in q.evidence:
            if any(chunks[c]["doc_id"] == doc for c in top):
                continue
            subjects = {s for c in by_doc.get(doc, []) for s in chunks[c].get("subjects") or []}
            named = [(s, s in linked.get(t, [])) for s in subjects for t in top
                     if s.lower() in chunks[t]["text"].lower()]
            kind = ("no subject" if not subjects else "named, not linked" if any(not ok for _, ok in named)
                    else "named and linked" if named else "named nowhere in the top 5")
            kinds[kind] += 1
            print(q.type, doc, "|", kind)
    print(dict(kinds))


if __name__ == "__main__":
    main()
