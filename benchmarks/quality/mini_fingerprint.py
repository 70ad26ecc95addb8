"""Mini mode's full results for a dev set's questions, as JSON: a behaviour fingerprint.

For each question: the ranked chunks (id, ``via``, score, entities), the reasoning paths in
result order (query entity, nodes, score, specificity), the key edges, seeds, answer
candidates and notes, under the suite's settings (``top_k`` 10, no token budget) and the
defaults. Dump at two commits, then diff (scores compared within ``--tolerance``)::

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/quality/mini_fingerprint.py pydantic_docs \\
        --workdir out/pydantic_docs.workdir > after.json
    python benchmarks/quality/mini_fingerprint.py --diff before.json after.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SETTINGS = {"suite": {"top_k": 10, "token_budget": 10**9}, "default": {}}


def fingerprint(result: Any) -> dict[str, Any]:
    """The parts of a ``RetrievalResult`` a refactor must leave unchanged."""
    return {
        "chunks": [[c.chunk_id, c.via, c.score, c.entities] for c in result.chunks],
        "paths": [[p.query_entity, list(p.nodes), p.score, p.specificity] for p in result.paths],
        "key_edges": [[e.source, e.target, e.score, e.description, e.keywords] for e in result.key_edges],
        "seeds": result.seeds,
        "answer_candidates": result.answer_candidates,
        "notes": result.notes,
    }


def dump(name: str, workdir: Path, split: str) -> dict[str, Any]:
    from benchmarks.common import open_corpus_index
    from benchmarks.quality import devsets

    data = devsets.load(name)
    questions = [q.question for q in data.questions if (split == "all" or q.split == split) and q.has_evidence]
    index, _ = open_corpus_index(workdir, data.documents, rebuild=False)
    return {label: {q: fingerprint(index.query(q, mode="mini", **overrides)) for q in questions}
            for label, overrides in SETTINGS.items()}


def differences(a: Any, b: Any, where: str, tolerance: float) -> list[str]:
    """Where ``a`` and ``b`` differ (floats compared within ``tolerance``)."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=0, abs_tol=tolerance):
            return []
        return [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{where}: keys {list(a)} != {list(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}/{k}", tolerance)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]", tolerance)]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", nargs="?", help="dev set name (benchmarks.quality.devsets)")
    parser.add_argument("--workdir", type=Path, help="the set's built index (as run_suite.py builds it)")
    parser.add_argument("--split", default="test", choices=("tune", "test", "all"))
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two dumps")
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args(argv)
    if args.diff:
        before, after = (json.loads(p.read_text()) for p in args.diff)
        found = differences(before, after, "", args.tolerance)
        print("\n".join(found[:50]) or "identical", f"({len(found)} differences)" if found else "")
        return 1 if found else 0
    if not args.set or not args.workdir:
        parser.error("give a set and --workdir, or --diff BEFORE AFTER")
    json.dump(dump(args.set, args.workdir, args.split), sys.stdout, indent=None)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
