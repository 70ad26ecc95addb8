"""A new process's first query on a MiniRAG property graph kept in a graph store (run by
``pg_parity.py --first-query``): ``pg_first_query.py STORE TARGET VECTORS QUESTION`` prints the
seconds from opening the store to the first answer, the texts embedded meanwhile, and how many
of them are the graph's own texts (chunk windows, relation texts; entity names are counted apart,
as a question's entity spans can equal them)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder  # noqa: E402


class CountingEmbedder(SentenceTransformerEmbedder):
    embedded: list[str] = []

    def embed(self, texts):  # type: ignore[override]
        CountingEmbedder.embedded.extend(texts)
        return super().embed(texts)


def main(argv: list[str]) -> None:
    from llama_index_minirag import MiniRAGRetriever, falkordb_store, ladybug_store
    from minirag_core.retrieval.memory_sources import vector_texts

    kind, target, vectors, question = argv
    embedder = CountingEmbedder()
    embedder.embed(["warm the model up"])  # model loading is not the graph's cost
    CountingEmbedder.embedded = []
    started = time.perf_counter()
    store = falkordb_store(target) if kind == "falkordb" else ladybug_store(target)
    retriever = MiniRAGRetriever.from_property_graph(store, embed_model=embedder, top_k=5, vector_cache=vectors)
    retriever.retrieve(question)
    seconds = time.perf_counter() - started
    embedded = set(CountingEmbedder.embedded)
    g = retriever.sources.snapshot().graph.graph
    names = {attrs["name"] for _, attrs in g.nodes(data=True) if attrs.get("kind") == "entity"}
    graph_texts = set(vector_texts(g, embedder)) - names
    print(json.dumps({"seconds": round(seconds, 2), "texts_embedded": len(CountingEmbedder.embedded),
                      "graph_texts_embedded": len(embedded & graph_texts),
                      "entity_names_embedded": len(embedded & names), "entity_names": len(names)}))


if __name__ == "__main__":
    main(sys.argv[1:])
