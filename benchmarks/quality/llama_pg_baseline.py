"""The stock alternative a LlamaIndex user has: ``PropertyGraphIndex`` with the LLM-free
``ImplicitPathExtractor`` (edges from each chunk's source/previous/next links) and
``VectorContextRetriever`` (vector search over the graph's nodes, then their neighbourhood),
built on the same chunks and the same embedding model as every other system in the suite."""

from __future__ import annotations

from typing import Any

from llama_index.core import PropertyGraphIndex
from llama_index.core.indices.property_graph import ImplicitPathExtractor, VectorContextRetriever
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from llama_index_minirag.adapters import MiniLMEmbedding


def text_nodes(chunks: dict[str, dict[str, Any]]) -> list[TextNode]:
    """One TextNode per chunk, linked to its document and its neighbours, as a splitter would."""
    nodes = {cid: TextNode(id_=cid, text=attrs["text"], metadata={"doc_id": attrs["doc_id"]},
                           excluded_embed_metadata_keys=["doc_id"], excluded_llm_metadata_keys=["doc_id"])
             for cid, attrs in chunks.items()}
    by_doc: dict[str, list[str]] = {}
    for cid, attrs in sorted(chunks.items(), key=lambda kv: (kv[1]["doc_id"], kv[1].get("order", 0))):
        by_doc.setdefault(attrs["doc_id"], []).append(cid)
    for doc_id, ids in by_doc.items():
        for i, cid in enumerate(ids):
            rel = nodes[cid].relationships
            rel[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc_id)
            if i > 0:
                rel[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id=ids[i - 1])
            if i + 1 < len(ids):
                rel[NodeRelationship.NEXT] = RelatedNodeInfo(node_id=ids[i + 1])
    return list(nodes.values())


class LlamaPropertyGraphBaseline:
    """Ranks chunk ids with LlamaIndex's own property-graph retrieval."""

    def __init__(self, chunks: dict[str, dict[str, Any]], embedder, *, top_k: int = 10) -> None:
        embed_model = MiniLMEmbedding(embedder, embed_batch_size=64)
        self.chunk_ids = set(chunks)
        self.index = PropertyGraphIndex(nodes=text_nodes(chunks), kg_extractors=[ImplicitPathExtractor()],
                                        embed_model=embed_model, show_progress=False)
        sub = VectorContextRetriever(self.index.property_graph_store, embed_model=embed_model,
                                     vector_store=self.index.vector_store, include_text=True,
                                     similarity_top_k=top_k, path_depth=1)
        self.retriever = self.index.as_retriever(sub_retrievers=[sub], include_text=True)

    def rank(self, query: str, n: int) -> list[str]:
        """Chunk ids in the order the retriever returns them (duplicates dropped).

        With only implicit edges the graph holds no embedded entity nodes, so the vector search
        finds nothing to start from; the store then returns its first triplets (``a -> NEXT -> b``)
        whatever the query. A returned node is mapped to the chunks its triplet names."""
        ranked: list[str] = []
        for hit in self.retriever.retrieve(query):
            source = hit.node.ref_doc_id
            names = [source] if source in self.chunk_ids else [
                part.strip() for part in hit.node.get_content().split("\n\n")[0].split(" -> ")[::2]]
            ranked.extend(c for c in names if c in self.chunk_ids and c not in ranked)
        return ranked[:n]
