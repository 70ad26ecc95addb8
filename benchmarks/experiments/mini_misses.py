"""Mini's misses on a development set's half: for each question whose evidence page is not in the
top 5, the top chunks and the missed page with their score terms (query relevance, eq. 3 graph
score, bridge score and the bridge that reached the chunk: source, entity, the entity's chunk count).

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/experiments/mini_misses.py hotpotqa_100 --split tune \\
        --out /work/out/base [--setting '{"bridge_local_pool": 0}'] [--show QUESTION_ID ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from minirag_core.retrieval.modes import mini  # noqa: E402

DEPTH = 40  # chunks ranked per question


def capture() -> dict[str, Any]:
    """Record mini's relevance, graph scores and bridges of the last query (wraps two module functions)."""
    seen: dict[str, Any] = {}
    bridges_over, add_bridges = mini.bridges_over, mini.add_bridges

    def recording_bridges(*args: Any, **kwargs: Any):
        seen["bridged"], seen["bridges"] = found = bridges_over(*args, **kwargs)
        return found

    def recording_add(ranked, relevance, graph_scores, *rest):
        seen["relevance"], seen["graph"] = relevance, graph_scores
        return add_bridges(ranked, relevance, graph_scores, *rest)

    mini.bridges_over, mini.add_bridges = recording_bridges, recording_add
    return seen


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name")
    p.add_argument("--split", default="tune", choices=("tune", "test"))
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its workdirs are reused)")
    p.add_argument("--setting", default="{}", help="a JSON object of settings")
    p.add_argument("--show", nargs="*", default=[], help="also show these question ids when they miss nothing")
    args = p.parse_args(argv)
    configure_threads(1)
    seen = capture()
    data = devsets.load(args.name)
    index, _ = open_corpus_index(args.out / f"{args.name}.workdir", data.documents)
    links = index.graph_store.link_arrays()
    for q in [q for q in data.half(args.split) if q.has_evidence]:
        seen.clear()
        result = index.query(q.question, mode="mini", top_k=DEPTH, token_budget=10**9, **json.loads(args.setting))
        docs = [c.doc_id for c in result.chunks]
        missed = [e for e in q.evidence if e not in docs[:5]]
        if not missed and q.id not in args.show:
            continue
        relevance, bridged = seen.get("relevance", {}), seen.get("bridged", {})
        way = {b.target: b for b in seen.get("bridges", [])}

        def terms(chunk: str) -> str:
            text = (f"rel={float(relevance.get(chunk, 0.0)):.3f} graph={seen.get('graph', {}).get(chunk, 0.0):.1f} "
                    f"bridge={bridged.get(chunk, 0.0):.3f}")
            bridge = way.get(chunk)
            if bridge is not None:
                row = links.entity_position.get(bridge.entity)
                count = int(links.counts[row]) if row is not None else 0
                text += f" via {bridge.source[:30]} -{bridge.entity} ({count}/{len(links.chunk_ids)} chunks)->"
            return text

        print("=" * 80, f"\n{q.id} {q.type} {q.question} | answer: {q.answer}\nevidence {q.evidence}")
        for rank, chunk in enumerate(result.chunks[:7], 1):
            mark = "*" if chunk.doc_id in q.evidence else " "
            print(f" {mark}{rank}. {chunk.doc_id[:45]:45s} {chunk.via:9s} score={chunk.score:.3f} {terms(chunk.chunk_id)}")
        for page in missed:
            at = [i for i, d in enumerate(docs) if d == page]
            where = (f"rank {at[0] + 1} score={result.chunks[at[0]].score:.3f} {terms(result.chunks[at[0]].chunk_id)}"
                     if at else f"not in the top {DEPTH}")
            print(f"  MISS {page}: {where}")
    index.close() if hasattr(index, "close") else None


if __name__ == "__main__":
    main()
