"""A second process on a MiniRAG property graph (run by test_pg_graph_stores.py):

``query STORE TARGET VECTORS QUESTIONS_JSON`` prints the top chunks per question and every text
the process embedded; ``insert STORE TARGET DOC_ID TEXT`` inserts one document through MiniRAG.
STORE is ``falkordb`` (TARGET a URL) or ``ladybug`` (TARGET a database file)."""

from __future__ import annotations

import json
import sys
import time

from llama_index.core import Document

from llama_index_minirag import MiniLMEmbedding, MiniRAGRetriever, falkordb_store, ladybug_store, open_property_graph
from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder


class CountingEmbedder(SentenceTransformerEmbedder):
    """The bundled model, remembering every text it embeds."""

    texts: list[str] = []

    def embed(self, texts):  # type: ignore[override]
        CountingEmbedder.texts.extend(texts)
        return super().embed(texts)


def _store(kind: str, target: str):
    return falkordb_store(target) if kind == "falkordb" else ladybug_store(target)


def main(argv: list[str]) -> None:
    command, kind, target = argv[:3]
    embedder = CountingEmbedder()
    store = _store(kind, target)
    if command == "insert":
        doc_id, text = argv[3:5]
        open_property_graph(store, MiniLMEmbedding(embedder)).insert(Document(text=text, id_=doc_id))
        print(json.dumps({"inserted": doc_id}))
        return
    vectors, questions = argv[3], json.loads(argv[4])
    start = time.perf_counter()
    retriever = MiniRAGRetriever.from_property_graph(store, embed_model=embedder, top_k=5, vector_cache=vectors)
    results, first = [], None
    for question in questions:
        results.append([[n.node.ref_doc_id, n.score] for n in retriever.retrieve(question)])
        first = first if first is not None else time.perf_counter() - start
    print(json.dumps({"results": results, "embedded": CountingEmbedder.texts, "first_query_s": first}))


if __name__ == "__main__":
    main(sys.argv[1:])
