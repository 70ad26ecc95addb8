"""What mini shows a user beside its hits, measured on a development set's questions:

* the share of shown key relationships that are parsed relations or links (not bare co-occurrence),
  and the share that are links between pages;
* the share of proposed answer types that the graph holds;
* the median Jaccard overlap of the reasoning-path sets shown with two hits of one answer (lower:
  each hit is explained by its own paths);
* distinct documents in the top 5.

"Shown" is what the LangChain adapter puts in each hit's metadata: the first
``MAX_PATHS_PER_CHUNK`` paths and ``MAX_RELATIONSHIPS_PER_CHUNK`` key relationships of the hit's
explanation (``RetrievalResult.explain``).

    .venv/bin/python benchmarks/quality/explanations.py --set pydantic_docs --split test
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import BENCH_DIR, DEFAULT_OUT, configure_threads, git_commit, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.run_suite import workdir_for  # noqa: E402

SHOWN_PATHS = SHOWN_EDGES = 5  # as langchain_minirag.retrievers.MAX_PATHS_PER_CHUNK / MAX_RELATIONSHIPS_PER_CHUNK
GENERIC = {"co-occurrence", "conversation", "session time", ""}
LINK = "links to"


def _jaccard(a: set, b: set) -> float | None:
    if not a and not b:
        return None
    return len(a & b) / len(a | b)


def measure(index, questions: list[devsets.Question], top_k: int = 5) -> dict:
    pool = set(index.type_pool())
    edges = parsed = links = 0
    types = typed_in_graph = 0
    overlaps: list[float] = []
    shown_all: list[set] = []
    distinct: list[int] = []
    for q in questions:
        result = index.query(q.question, mode="mini", top_k=top_k)
        proposed = list(result.mapping.answer_types) if result.mapping else []
        types += len(proposed)
        typed_in_graph += sum(t in pool for t in proposed)
        shown_paths = []
        for chunk in result.chunks:
            why = result.explain(chunk.chunk_id)
            for edge in why.ranked_key_edges()[:SHOWN_EDGES]:
                words = {k.strip() for k in edge.keywords.split(",")}
                edges += 1
                parsed += not words <= GENERIC
                links += LINK in words
            shown_paths.append({(p.query_entity, tuple(p.nodes)) for p in why.ranked_paths()[:SHOWN_PATHS]})
        shown_all += shown_paths
        overlaps += [j for a, b in combinations(shown_paths, 2) for j in [_jaccard(a, b)] if j is not None]
        distinct.append(len({c.doc_id for c in result.chunks}))
    return {
        "questions": len(questions),
        "shown_key_edges": edges,
        "parsed_or_link_share": 100.0 * parsed / edges if edges else None,
        "link_share": 100.0 * links / edges if edges else None,
        "proposed_answer_types": types,
        "answer_types_in_graph_share": 100.0 * typed_in_graph / types if types else None,
        "hit_pairs": len(overlaps),
        "median_path_jaccard": statistics.median(overlaps) if overlaps else None,
        "mean_path_jaccard": statistics.mean(overlaps) if overlaps else None,
        "hits_without_paths": sum(not s for s in shown_all),
        "mean_distinct_documents_top5": statistics.mean(distinct) if distinct else None,
    }


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", default="pydantic_docs")
    p.add_argument("--split", choices=("test", "tune", "all"), default="test")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where run_suite.py keeps the set's index")
    p.add_argument("--write", type=Path, default=None, help="default: results/explanations_<set>_<split>.json")
    args = p.parse_args(argv)
    configure_threads(1)
    data = devsets.load(args.set)
    questions = [q for q in data.questions if args.split == "all" or q.split == args.split]
    index, _ = open_corpus_index(workdir_for(args.out, args.set, None), data.documents, rebuild=False)
    started = time.perf_counter()
    figures = {"set": args.set, "split": args.split, "commit": git_commit(), **measure(index, questions),
               "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(figures, indent=1))
    args.write = args.write or BENCH_DIR / "results" / f"explanations_{args.set}_{args.split}.json"
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
