"""Retrieved chunk ids and scores for fixed questions, as JSON: a behaviour fingerprint.

Builds a fresh in-memory core index of ``examples/lihuaworld_sample`` (and, with
``--adapters``, a LlamaIndex ``PropertyGraphIndex`` and a LangChain retriever over the same
sessions) and prints, for each question and mode, the chunk ids, scores and ``via`` in rank
order. Run it at two commits and diff the outputs: a refactor must leave them identical::

    PYTHONHASHSEED=0 PYTHONPATH=$PWD/shared:$PWD python -m benchmarks.retrieval_ids --adapters > ids.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "lihuaworld_sample"
MODES = ("mini", "light", "naive")
QUESTIONS = [
    "Where did they plan to have lunch?",
    "When will the plumber arrive to fix the water tap?",
    "What is the Wi-Fi password of the apartment?",
    "Who broke a light fixture?",
    "What are the best spots in the city for photography?",
    "Which gym did they talk about joining?",
    "Who is the personal trainer?",
    "When is the Lunar New Year celebration?",
    "What dishes were cooked for the celebration?",
    "Which movie did they plan to watch?",
    "Where is the new burger place?",
    "What lean meats were recommended for the meal plan?",
    "When is the rent due?",
    "What maintenance work is planned in the building?",
    "How do I report maintenance issues in the house?",
    "Who repaired the door hinge?",
    "What fitness equipment was needed?",
    "Why was the client frustrating?",
    "What did the landlord do after the water tab broke?",
    "How is the progress with the workout plan this week?",
]


def _sessions() -> list[tuple[str, str]]:
    return [(p.stem, p.read_text(encoding="utf-8")) for p in sorted(SAMPLE.glob("*.txt"))]


def _rows(result: Any) -> list[list[Any]]:
    return [[c.chunk_id, round(float(c.score), 6), c.via] for c in result.chunks]


def core_ids(embedder: Any) -> dict[str, Any]:
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document

    index = MiniRAGIndex(None, embedder=embedder)
    index.insert([Document(id=s, text=t, metadata={"session": s}) for s, t in _sessions()])
    out: dict[str, Any] = {"stats": index.stats()}
    for mode in MODES:
        out[mode] = {q: _rows(index.query(q, mode=mode)) for q in QUESTIONS}
    from langchain_minirag import MiniRAGRetriever as LCRetriever

    retriever = LCRetriever.from_index(index, k=5)
    out["langchain"] = {mode: {q: [[d.metadata["minirag_chunk_id"], round(d.metadata["minirag_score"], 6),
                                    d.metadata["minirag_via"], d.metadata["minirag_paths"][:2],
                                    d.metadata["minirag_key_relationships"][:2]]
                                   for d in retriever.invoke(q, mode=mode)] for q in QUESTIONS[:8]}
                        for mode in MODES}
    return out


def llama_ids(embedder: Any) -> dict[str, Any]:
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import SentenceSplitter

    from llama_index_minirag import MiniLMEmbedding, MiniRAGExtractor, MiniRAGRetriever

    embed = MiniLMEmbedding(embedder)
    docs = [Document(text=t, id_=s, metadata={"session": s}) for s, t in _sessions()]
    # node ids from the document id, not uuid4: chunk ids order ties and joined descriptions
    splitter = SentenceSplitter(id_func=lambda i, doc: f"{doc.id_}-{i}")
    pg = PropertyGraphIndex.from_documents(docs, kg_extractors=[MiniRAGExtractor(embed_model=embed)],
                                           embed_model=embed, llm=MockLLM(), use_async=False,
                                           embed_kg_nodes=False, transformations=[splitter])
    out: dict[str, Any] = {}
    for mode in MODES:
        retriever = MiniRAGRetriever.from_property_graph(pg, mode=mode)
        rows = {}
        for q in QUESTIONS:
            nodes = retriever.retrieve(q)
            rows[q] = [[n.node.metadata["minirag_doc_id"], round(float(n.score), 6), n.node.metadata["minirag_via"],
                        n.node.metadata["minirag_reasoning_paths"][:2],
                        n.node.metadata["minirag_key_relationships"][:2]] for n in nodes]
        out[mode] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapters", action="store_true", help="also the LangChain and LlamaIndex retrievers")
    args = parser.parse_args(argv)
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    out = {"core": core_ids(embedder)}
    if args.adapters:
        out["llama_index"] = llama_ids(embedder)
    json.dump(out, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
