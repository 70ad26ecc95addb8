"""How well a follow-up's scores tell its evidence from the other chunks (tune halves' chains, no model).

    .venv/bin/python benchmarks/quality/session_separation.py --sets pydantic_docs,musique_50

For every follow-up of the tune half's chains (``questions/chains/<set>.tune.json``), an independent
mini query at top_k 10: the 5th chunk's score as a share of the best, and for the chunks below rank 1
the share of the best for evidence and other chunks, by the ranking score and by whole-chunk dense
similarity (the embedder, query against chunk text). Percentiles 10 / 50 / 90 are printed: where the
evidence and the others overlap, no relevance cut (``admit_ratio``) can drop the others alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.run_suite import workdir_for  # noqa: E402
from benchmarks.quality.session_chains import load_chains  # noqa: E402


def percentiles(values: list[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in np.percentile(values, [10, 50, 90])) if values else "-"


def separation(index, chains: list[dict]) -> dict[str, list[float]]:
    shares: dict[str, list[float]] = {k: [] for k in ("fifth", "score_evidence", "score_other",
                                                       "dense_evidence", "dense_other")}
    for chain in chains:
        for turn in chain["turns"][1:]:
            result = index.query(turn["question"], mode="mini", top_k=10, token_budget=10**9)
            if not result.chunks or result.chunks[0].score <= 0:
                continue
            query = np.asarray(index.embedder.embed([turn["question"]])[0])
            texts = np.asarray(index.embedder.embed([c.text for c in result.chunks]))
            dense = texts @ query / (np.linalg.norm(texts, axis=1) * np.linalg.norm(query))
            best = result.chunks[0].score
            if len(result.chunks) >= 5:
                shares["fifth"].append(result.chunks[4].score / best)
            for chunk, similarity in zip(result.chunks[1:], dense[1:]):
                kind = "evidence" if chunk.doc_id in turn["evidence"] else "other"
                shares[f"score_{kind}"].append(chunk.score / best)
                shares[f"dense_{kind}"].append(float(similarity / dense.max()))
    return shares


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="pydantic_docs,scrapy_docs,lihuaworld,musique_50,hotpotqa_100")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the indexes are built and reused")
    args = p.parse_args(argv)
    configure_threads(1)
    print("| set | follow-ups | 5th / best score | evidence: score / best | others: score / best | "
          "evidence: dense / best | others: dense / best |\n|---|---|---|---|---|---|---|")
    for name in [s for s in args.sets.split(",") if s]:
        data = devsets.load(name)
        _, chains = load_chains(data, False, devsets.TUNE)
        index, _ = open_corpus_index(workdir_for(args.out, name, None), data.documents)
        s = separation(index, chains)
        index.close()
        print(f"| {name} | {len(s['fifth'])} | {percentiles(s['fifth'])} | {percentiles(s['score_evidence'])} | "
              f"{percentiles(s['score_other'])} | {percentiles(s['dense_evidence'])} | "
              f"{percentiles(s['dense_other'])} |", flush=True)


if __name__ == "__main__":
    main()
