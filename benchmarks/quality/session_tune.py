"""Choose a session's follow-up admission on the tune halves' chains (no model run).

    .venv/bin/python benchmarks/quality/session_tune.py --sets musique_50,lihuaworld

Every setting of the grid asks each set's tune-half chains (``questions/chains/<set>.tune.json``,
written by ``chains.py`` on first use) as one ``index.session()`` per chain, next to independent
queries; the table gives tokens per chain, the saving and all-evidence recall. The setting taken is
the one saving most on its worst set among those whose all-evidence recall is no lower than the
independent queries' on every set. Raw output: ``benchmarks/results/sessions/session_tune_<commit>.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, git_commit, machine_info, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.run_suite import workdir_for  # noqa: E402
from benchmarks.quality.session_chains import BASELINE, RESULTS_DIR, load_chains, run_sessions, session_table  # noqa: E402

RATIOS = (None, 0.5, 0.6, 0.7, 0.8, 0.9)


def grid(ratios: tuple[float | None, ...], rows: tuple[bool, ...] = (False, True),
         caps: tuple[int | None, ...] = (None,)) -> dict[str, dict | None]:
    systems: dict[str, dict | None] = {BASELINE: None}
    for ratio, by_rows, cap in itertools.product(ratios, rows, caps):
        name = f"admit_ratio={ratio}, rows_of_new_chunks={by_rows}" + (f", new_chunks={cap}" if cap is not None else "")
        systems[name] = {"admit_ratio": ratio, "rows_of_new_chunks": by_rows, "new_chunks": cap}
    return systems


def choose(results: list[dict], systems: dict[str, dict | None]) -> tuple[str | None, dict[str, float]]:
    """The setting saving most on its worst set, among those losing no all-evidence recall on any."""
    worst: dict[str, float] = {}
    for system in systems:
        if system == BASELINE:
            continue
        rows = [(r["sessions"]["summary"][system], r["sessions"]["summary"][BASELINE]) for r in results]
        if all(s["all_evidence_recall"] >= b["all_evidence_recall"] for s, b in rows):
            worst[system] = min(s["token_saving_percent"] for s, _ in rows)
    return (max(worst, key=worst.__getitem__) if worst else None), worst


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="lihuaworld,musique_50,pydantic_docs,uv_docs,scrapy_docs,hotpotqa_100")
    p.add_argument("--ratios", default=",".join("none" if r is None else str(r) for r in RATIOS))
    p.add_argument("--rows", default="false,true", help="rows_of_new_chunks values")
    p.add_argument("--caps", default="none", help="new_chunks values")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the indexes are built and reused")
    p.add_argument("--label", default="", help="a prefix of the output file's name")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    configure_threads(args.threads)
    systems = grid(tuple(None if r == "none" else float(r) for r in args.ratios.split(",")),
                   tuple(r == "true" for r in args.rows.split(",")),
                   tuple(None if c == "none" else int(c) for c in args.caps.split(",")))
    results = []
    for name in [s for s in args.sets.split(",") if s]:
        data = devsets.load(name)
        how, chains = load_chains(data, False, devsets.TUNE)
        index, _ = open_corpus_index(workdir_for(args.out, name, None), data.documents)
        results.append({"set": name, "split": devsets.TUNE, "made_by": how,
                        "sessions": run_sessions(index, chains, systems)})
        index.close()
        print(session_table(results[-1:]), flush=True)
    chosen, worst = choose(results, systems)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"session_tune_{args.label}{git_commit() or 'unknown'}.json"
    out.write_text(json.dumps({"commit": git_commit(), "machine": machine_info(), "systems": systems,
                               "chosen": chosen, "worst_saving": worst, "sets": results}, indent=1, default=str))
    print(session_table(results))
    print("worst-set saving of the settings losing no all-evidence recall:",
          json.dumps(dict(sorted(worst.items(), key=lambda kv: -kv[1])), indent=1))
    print(f"chosen: {chosen}\nwrote {out}")


if __name__ == "__main__":
    main()
