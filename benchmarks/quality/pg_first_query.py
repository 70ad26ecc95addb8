"""A new process's first query on a MiniRAG property graph kept in a graph store (run by
``pg_parity.py --first-query``): ``pg_first_query.py STORE TARGET VECTORS QUESTION`` prints the
seconds from opening the store to the first answer and the texts embedded meanwhile."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder  # noqa: E402


class CountingEmbedder(SentenceTransformerEmbedder):
    embedded = 0

    def embed(self, texts):  # type: ignore[override]
        CountingEmbedder.embedded += len(texts)
        return super().embed(texts)


def main(argv: list[str]) -> None:
    from llama_index_minirag import MiniRAGRetriever, falkordb_store, ladybug_store

    kind, target, vectors, question = argv
    embedder = CountingEmbedder()
    embedder.embed(["warm the model up"])  # model loading is not the graph's cost
    CountingEmbedder.embedded = 0
    started = time.perf_counter()
    store = falkordb_store(target) if kind == "falkordb" else ladybug_store(target)
    retriever = MiniRAGRetriever.from_property_graph(store, embed_model=embedder, top_k=5, vector_cache=vectors)
    retriever.retrieve(question)
    seconds = time.perf_counter() - started
    without = CountingEmbedder.embedded
    print(json.dumps({"seconds": round(seconds, 2), "texts_embedded": without}))


if __name__ == "__main__":
    main(sys.argv[1:])
