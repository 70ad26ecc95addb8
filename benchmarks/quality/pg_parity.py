"""The LlamaIndex path against the core on whole development sets: a ``PropertyGraphIndex`` built
with ``MiniRAGExtractor`` and searched with ``MiniRAGRetriever.from_property_graph`` must rank
the same documents as a core index of the same texts (``tests/`` check it on small slices).

    .venv/bin/python benchmarks/quality/pg_parity.py --sets hotpotqa_100,musique_50,lihuaworld
    .venv/bin/python benchmarks/quality/pg_parity.py --sets lihuaworld --chunks core   # the core's chunks as nodes
    .venv/bin/python benchmarks/quality/pg_parity.py --sets lihuaworld --chunks minirag  # MiniRAGTokenSplitter

With ``--chunks splitter`` (default) the documents go through LlamaIndex's default node parser, as
a user's would; its chunks differ from the core's token windows where documents are long, and
then only the ranking *given the same chunks* is the same: ``--chunks core`` checks that, and
``--chunks minirag`` parses the documents with ``MiniRAGTokenSplitter`` (the core's windows).

Reuses ``run_suite.py``'s core indexes (``--out``); updates ``results/pg_parity.json``: per set and
chunking, how many questions (both halves) get the same top 5 documents in order, and both recall@5.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.common import BENCH_DIR, DEFAULT_OUT, configure_threads, open_corpus_index  # noqa: E402
from benchmarks.quality.llama_pg_baseline import text_nodes  # noqa: E402
from benchmarks.quality.run_suite import score  # noqa: E402


def compare_set(name: str, out: Path, chunks: str = "splitter") -> dict:
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.llms import MockLLM

    from llama_index_minirag import (MiniLMEmbedding, MiniRAGExtractor, MiniRAGRetriever, MiniRAGTokenSplitter,
                                     PropertyGraphSources)

    data = devsets.load(name)
    core, _ = open_corpus_index(out / f"{name}.workdir", data.documents)
    embed_model = MiniLMEmbedding(core.embedder)
    started = time.perf_counter()
    settings = {"kg_extractors": [MiniRAGExtractor(embed_model=embed_model)], "embed_model": embed_model,
                "llm": MockLLM(), "use_async": False, "embed_kg_nodes": False}
    if chunks == "core":  # the core's chunks, in its insertion order, linked as a splitter links them
        pg = PropertyGraphIndex(nodes=text_nodes(core.graph_store.chunks(core.graph_store.chunk_ids())), **settings)
    else:
        if chunks == "minirag":
            settings["transformations"] = [MiniRAGTokenSplitter(embed_model=embed_model)]
        pg = PropertyGraphIndex.from_documents(
            [Document(text=d.text, id_=d.id, metadata=dict(d.metadata)) for d in data.documents], **settings)
    sources = PropertyGraphSources(pg.property_graph_store, embed_model)
    retriever = MiniRAGRetriever.from_property_graph(sources, mode="mini", query_mapper=core.query_mapper, top_k=5)
    seconds_build = time.perf_counter() - started
    same, ours_recall, core_recall, differ = 0, [], [], []
    questions = [q for q in data.questions if q.has_evidence]
    for q in questions:
        ours = [c.doc_id for c in retriever.retrieve_result(q.question).chunks]
        theirs = [c.doc_id for c in core.query(q.question, mode="mini", top_k=5).chunks]
        same += ours == theirs
        if ours != theirs:
            differ.append(q.id)
        ours_recall.append(score(q, ours, [""] * len(ours))["recall@5"])
        core_recall.append(score(q, theirs, [""] * len(theirs))["recall@5"])
    return {"set": name, "chunks": chunks, "questions": len(questions), "same_top5": same,
            "recall@5": {"pg": 100 * sum(ours_recall) / len(questions), "core": 100 * sum(core_recall) / len(questions)},
            "differ": differ, "seconds_pg_build": seconds_build,
            "core_stats": core.graph_store.stats(), "pg_stats": sources.stats()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sets", default="hotpotqa_100,musique_50")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="run_suite.py's --out (its core workdirs are reused)")
    p.add_argument("--chunks", choices=("splitter", "core", "minirag"), default="splitter",
                   help="LlamaIndex's default node parser, the core's chunks as nodes, or MiniRAGTokenSplitter")
    args = p.parse_args(argv)
    configure_threads(1)
    results = BENCH_DIR / "results" / "pg_parity.json"
    rows = json.loads(results.read_text()) if results.exists() else []
    for name in args.sets.split(","):
        row = compare_set(name, args.out, args.chunks)
        rows = [r for r in rows if (r["set"], r.get("chunks", "splitter")) != (name, args.chunks)] + [row]
        print(f"{name} ({args.chunks} chunks): {row['same_top5']} of {row['questions']} questions with the same "
              f"top 5; recall@5 PG {row['recall@5']['pg']:.1f}, core {row['recall@5']['core']:.1f}", flush=True)
        results.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
