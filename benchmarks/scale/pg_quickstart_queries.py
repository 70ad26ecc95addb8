"""The LlamaIndex quick start's query times: build the README's PropertyGraphIndex over
``examples/lihuaworld_sample`` (offline extraction), then time its first and second
retrievals and count the texts each embeds (the model and its encoders are loaded before the clock starts).

    python benchmarks/scale/pg_quickstart_queries.py [FOLDER]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main(folder: str) -> dict[str, float]:
    from llama_index.core import PropertyGraphIndex, SimpleDirectoryReader
    from llama_index.core.llms import MockLLM

    from llama_index_minirag import MiniLMEmbedding, MiniRAGExtractor, MiniRAGPGRetriever, MiniRAGTokenSplitter
    from llama_index_minirag.adapters import default_core_embedder

    core = default_core_embedder()
    core.embed(["load the model first"])  # and the batch encoders: loading is not a query's cost
    core.embed([" ".join(f"warm{i}-{j}" for j in range(120)) for i in range(40)])
    embedded: list[str] = []
    embed = core.embed
    core.embed = lambda texts: (embedded.extend(texts), embed(texts))[1]  # type: ignore[method-assign]

    docs = SimpleDirectoryReader(folder).load_data()
    started = time.perf_counter()
    index = PropertyGraphIndex.from_documents(docs, kg_extractors=[MiniRAGExtractor()],
                                              transformations=[MiniRAGTokenSplitter()],
                                              embed_model=MiniLMEmbedding(), llm=MockLLM(),
                                              embed_kg_nodes=False, use_async=False)
    figures: dict[str, float] = {"documents": len(docs), "build_s": round(time.perf_counter() - started, 2)}
    retriever = index.as_retriever(sub_retrievers=[MiniRAGPGRetriever(index.property_graph_store, top_k=3)])
    for label, question in (("first", "Where did Li Hua and Wolfgang have lunch?"),
                            ("second", "Who plays the piano?")):
        embedded.clear()
        started = time.perf_counter()
        retriever.retrieve(question)
        figures[f"{label}_query_s"] = round(time.perf_counter() - started, 3)
        figures[f"{label}_query_texts_embedded"] = len(embedded)
    return figures


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else str(REPO / "examples" / "lihuaworld_sample"))))
