"""Try (not adopted): a passage titled "<Aspect> of <Entity>" ("Geography of X", "History of Y")
is also about <Entity> when its text names it, so bridges reach it from chunks mentioning <Entity>.

Measured without re-indexing: the graph's ``subject_chunks`` is wrapped to add those chunks.

    .venv/bin/python benchmarks/experiments/tried/aspect_title_subjects.py --split tune
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.run_suite import question_group, score  # noqa: E402

ASPECT_OF = re.compile(r"^\S+ OF (.+)$")  # one word, "of", the entity (subjects are upper-cased ids)


def aspect_subjects(graph) -> dict[str, list[str]]:
    """Entity -> chunks whose subject is "<word> of <entity>" and whose text names the entity."""
    found: dict[str, list[str]] = {}
    for chunk, attrs in graph.chunks(graph.chunk_ids()).items():
        named = set(graph.chunk_entities([chunk]).get(chunk, []))
        for subject in attrs.get("subjects") or []:
            match = ASPECT_OF.match(subject)
            if match and match.group(1).strip() in named:
                found.setdefault(match.group(1).strip(), []).append(chunk)
    return found


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--split", choices=["tune", "test"], default="tune")
    args = p.parse_args()
    configure_threads(1)
    rows = []
    for name in devsets.available():
        data = devsets.load(name)
        questions = [q for q in data.half(args.split) if q.has_evidence]
        index, _ = open_corpus_index(DEFAULT_OUT / f"{name}.workdir", data.documents)
        graph = index.graph_store
        original, extra = graph.subject_chunks, aspect_subjects(graph)
        for on in (False, True):
            def widened(ids, original=original):
                ids = list(ids)
                out = original(ids)
                for e in ids:
                    if e in extra:
                        out[e] = sorted(set(out.get(e, [])) | set(extra[e]))
                return out
            graph.subject_chunks = widened if on else original
            records, groups = [], {}
            for q in questions:
                result = index.query(q.question, mode="mini", top_k=10, token_budget=10**9)
                records.append(score(q, [c.doc_id for c in result.chunks], [c.text for c in result.chunks]))
                groups.setdefault(question_group(name, q.type), []).append(records[-1])
            pct = lambda rs, m: round(100 * sum(r[m] for r in rs) / len(rs), 1)  # noqa: E731
            rows.append({"set": name, "split": args.split, "aspect_subjects": on, "entities_widened": len(extra),
                         "recall@5": pct(records, "recall@5"), "all_evidence@5": pct(records, "all_evidence@5"),
                         "by_type": {g: [pct(v, "recall@5"), pct(v, "all_evidence@5")] for g, v in sorted(groups.items())}})
            print(json.dumps(rows[-1]), flush=True)
        graph.subject_chunks = original
    out = Path(__file__).resolve().parents[2] / "results" / "tried" / f"aspect_title_subjects_{args.split}.json"
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
