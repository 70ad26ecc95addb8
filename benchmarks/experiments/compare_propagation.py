"""Bounded k-hop bridge propagation (the library's choice) against personalised PageRank over the
chunk-entity graph (HippoRAG's), on the TUNE halves, mini mode, recall@5 / all-evidence@5.

    .venv/bin/python benchmarks/experiments/compare_propagation.py [--out benchmarks/out] [--sets musique_50,hotpotqa_100]

Indexes are reused from run_suite.py's workdirs. PPR: the walk moves over mention edges (weight
1, +``w_subject`` where the chunk is about the entity) and relation edges (``w_rel``), restarts
(probability ``alpha``) at the query's seed entities (similarity x inverse chunk frequency) and
the most query-relevant chunks; a chunk's PPR mass, max-normalised, takes the bridge term's
place ("replace") or is added to it ("add"). Systems: bridges (default settings), no-bridge,
ppr-replace and ppr-add for a few PPR settings.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.run_suite import score  # noqa: E402

PPR_SETTINGS = [dict(alpha=0.5, w_subject=3.0, w_rel=0.5), dict(alpha=0.3, w_subject=3.0, w_rel=0.5),
                dict(alpha=0.5, w_subject=0.0, w_rel=0.0)]


class PageRankBridges:
    """A drop-in for ``bridging.bridge_scores`` that scores chunks by personalised PageRank."""

    def __init__(self, store, alpha: float, w_subject: float, w_rel: float, combine: str, seed_chunks: int = 5,
                 iterations: int = 30) -> None:
        from minirag_core.retrieval.extensions import bridging

        self.alpha, self.combine, self.seed_chunks, self.iterations = alpha, combine, seed_chunks, iterations
        self.bridge_scores = bridging.bridge_scores
        g = store.graph
        self.nodes = list(g.nodes)
        self.pos = {n: i for i, n in enumerate(self.nodes)}
        kind = {n: a.get("kind") for n, a in g.nodes(data=True)}
        about = {(n, s) for n, a in g.nodes(data=True) if kind[n] == "chunk" for s in a.get("subjects", ())}
        rows, cols, vals = [], [], []
        for u, v in g.edges():
            if kind[u] == kind[v] == "entity":
                w = w_rel
            else:
                chunk, entity = (u, v) if kind[u] == "chunk" else (v, u)
                w = 1.0 + (w_subject if (chunk, entity) in about else 0.0)
            rows += [self.pos[u], self.pos[v]]
            cols += [self.pos[v], self.pos[u]]
            vals += [w, w]
        a = sp.csr_matrix((vals, (rows, cols)), shape=(len(self.nodes),) * 2)
        degree = np.asarray(a.sum(axis=1)).ravel()
        self.step = (sp.diags(1.0 / np.maximum(degree, 1e-12)) @ a).T.tocsr()
        self.is_chunk = np.array([kind[n] == "chunk" for n in self.nodes])

    def __call__(self, graph, relevance, seeds, *, seed_chunks, steps, damping):
        from minirag_core.scores import top_ids

        restart = np.zeros(len(self.nodes))
        links = graph.chunk_links(sorted(seeds))
        for entity, similarity in seeds.items():
            if entity in self.pos:
                restart[self.pos[entity]] += similarity * math.log(1 + self.is_chunk.sum() / max(1, len(links.get(entity, {}))))
        restart /= max(restart.sum(), 1e-12)
        chunks = np.zeros(len(self.nodes))
        for chunk in top_ids(relevance, self.seed_chunks):
            chunks[self.pos[chunk]] = relevance[chunk]
        restart += chunks / max(chunks.sum(), 1e-12)
        restart /= max(restart.sum(), 1e-12)
        rank = restart.copy()
        for _ in range(self.iterations):
            rank = self.alpha * restart + (1 - self.alpha) * (self.step @ rank)
        rank = np.where(self.is_chunk, rank - self.alpha * restart, 0.0)  # not for being a restart point
        peak = rank.max()
        out = {self.nodes[i]: float(rank[i] / peak) for i in np.nonzero(rank > 0)[0]} if peak > 0 else {}
        if self.combine == "replace":
            return out, []
        bridged, bridges = self.bridge_scores(graph, relevance, seeds, seed_chunks=seed_chunks, steps=steps,
                                              damping=damping)
        return {c: out.get(c, 0.0) + bridged.get(c, 0.0) for c in set(out) | set(bridged)}, bridges


def evaluate(index, questions, **overrides) -> tuple[float, float]:
    records = []
    for q in questions:
        result = index.query(q.question, mode="mini", top_k=10, token_budget=10**9, **overrides)
        records.append(score(q, [c.doc_id for c in result.chunks], [c.text for c in result.chunks]))
    return (100 * sum(r["recall@5"] for r in records) / len(records),
            100 * sum(r["all_evidence@5"] for r in records) / len(records))


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its workdirs are reused)")
    p.add_argument("--sets", default="musique_50,hotpotqa_100")
    args = p.parse_args(argv)
    configure_threads(1)
    from minirag_core.retrieval.modes import mini

    rows = []
    for name in args.sets.split(","):
        data = devsets.load(name)
        questions = [q for q in data.half("tune") if q.has_evidence]
        index, _ = open_corpus_index(args.out / f"{name}.workdir", data.documents)
        default = mini.bridge_scores
        systems = [("bridges", None, {}), ("no-bridge", None, {"bridge_weight": 0.0})]
        for setting in PPR_SETTINGS:
            for combine in ("replace", "add"):
                systems.append((f"ppr-{combine} {json.dumps(setting)}",
                                PageRankBridges(index.graph_store, combine=combine, **setting), {}))
        for label, scorer, overrides in systems:
            mini.bridge_scores = scorer or default
            try:
                recall, every = evaluate(index, questions, **overrides)
            finally:
                mini.bridge_scores = default
            rows.append({"set": name, "system": label, "recall@5": recall, "all_evidence@5": every})
            print(f"{name:13s} {label:60s} {recall:5.1f} / {every:5.1f}", flush=True)
    (args.out / "compare_propagation.json").write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
