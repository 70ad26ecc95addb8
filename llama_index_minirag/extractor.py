"""``MiniRAGExtractor``: MiniRAG's entity/relation extraction as a PropertyGraphIndex kg extractor.

Each LlamaIndex node becomes a core ``Chunk``; the core extractor (offline rules without a
model, the MiniRAG record prompt with one) reads it, and the core's own graph code
(``minirag_core.graph.heterogeneous.add_chunk``) folds the result into the chunk's per-entity and
per-relation records. Those records are written as:

* ``EntityNode(name=<display name>, label=<TYPE>, properties={"entity_id", "entity_type",
  "description"})`` - one per entity named in the chunk;
* ``Relation(label="RELATED", source, target, properties={"description", "keywords",
  "weight"})`` - entity-entity relations of the chunk;
* ``Relation(label="MENTIONED_IN", entity -> chunk node, properties={"description", ...})``
  - MiniRAG's entity-chunk edge with the entity's description in that chunk.

Graph stores merge repeated items differently (``SimplePropertyGraphStore`` keeps the first
copy of an entity or a relation, others overwrite), so the ``MENTIONED_IN`` edge also keeps
the chunk's own record of the entity (``entity_name``, ``entity_type``) and, on the
lexicographically first endpoint, the chunk's relations of that entity
(``chunk_relations``, a JSON string), and ``subject: true`` when the chunk is *about* the entity
(its title or heading, which bridges follow). From these :class:`~llama_index_minirag.graph_sources.
PropertyGraphSources` rebuilds exactly the graph the core would build from the same chunks.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional, Sequence

import networkx as nx
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, EntityNode, Relation
from llama_index.core.llms import LLM
from llama_index.core.schema import BaseNode, MetadataMode, NodeRelationship, TransformComponent

from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.extraction.base import Extractor
from minirag_core.llm.prompts import DEFAULT_ENTITY_TYPES
from minirag_core.types import Chunk, ExtractionResult

from .adapters import LlamaIndexLLMBackend, as_core_embedder
from .build_vectors import BuildVectors

RELATED = "RELATED"
MENTIONED_IN = "MENTIONED_IN"
UNKNOWN_TYPE = "UNKNOWN"
#: core ``INSERT_BATCH_CHUNKS``: the offline extractor types names per batch, so the same
#: batches give the same types as a core index built from the same chunks
DEFAULT_BATCH_SIZE = 64

__all__ = ["MiniRAGExtractor", "RELATED", "MENTIONED_IN", "node_to_chunk", "chunk_records", "position_in_document"]


def node_to_chunk(node: BaseNode, order: int, embedder: Any) -> Chunk:
    """A LlamaIndex node as a core chunk (id = node id, doc id = its source document)."""
    text = node.get_content(metadata_mode=MetadataMode.NONE)
    metadata = {k: v for k, v in node.metadata.items() if k not in (KG_NODES_KEY, KG_RELATIONS_KEY)}
    return Chunk(id=node.node_id, doc_id=node.ref_doc_id or node.node_id, order=order, text=text,
                 n_tokens=embedder.count_tokens(text), metadata=metadata)


def position_in_document(node: BaseNode) -> int:
    """0 for a document's first node (no ``PREVIOUS`` node: a title line only counts there), else 1."""
    return 1 if NodeRelationship.PREVIOUS in node.relationships else 0


def chunk_records(chunk: Chunk, extraction: ExtractionResult
                  ) -> tuple[dict[str, dict[str, str]], dict[tuple[str, str], dict[str, Any]], list[str]]:
    """The chunk's entity records {entity id: {name, type, description}}, relation records
    {(source id, target id): {description, keywords, weight}} and subject entity ids, folded by
    the core's own graph code so names, types and descriptions merge exactly as in a core index."""
    scratch = nx.Graph()
    graph_ops.add_chunk(scratch, chunk, extraction)
    entities = {n: dict(scratch.nodes[n]["sources"][chunk.id]) for n in scratch.neighbors(chunk.id)}
    relations = {tuple(e): dict(scratch.edges[tuple(e)]["sources"][chunk.id])
                 for e in scratch.nodes[chunk.id]["relations"]}
    return entities, relations, list(scratch.nodes[chunk.id]["subjects"])


class MiniRAGExtractor(TransformComponent):
    """MiniRAG extraction for ``PropertyGraphIndex(kg_extractors=[MiniRAGExtractor(...)])``.

    With ``llm=None`` the core's offline extractor runs (rules plus the bundled embedding
    model for types; no server). With a LlamaIndex ``llm`` the core ``LLMExtractor`` sends
    MiniRAG's extraction prompt through :class:`~llama_index_minirag.adapters.LlamaIndexLLMBackend`,
    ``num_workers`` chunks at a time, with ``max_gleaning`` extra rounds. A custom core
    ``Extractor`` may be passed as ``extractor=``.
    """

    llm: Optional[LLM] = Field(default=None, description="LlamaIndex LLM; None = offline extractor.")
    entity_types: List[str] = Field(default_factory=lambda: list(DEFAULT_ENTITY_TYPES))
    max_gleaning: int = Field(default=1, ge=0, description="Extra extraction rounds per chunk (LLM only).")
    num_workers: int = Field(default=4, ge=1, description="Chunks extracted concurrently (LLM only).")
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1, description="Chunks per core extractor call.")
    show_progress: bool = Field(default=False)
    relation_label: str = Field(default=RELATED)
    mention_label: str = Field(default=MENTIONED_IN)
    prepare_vectors: bool = Field(default=True, description=(
        "Embed the graph texts MiniRAG retrieval searches while extracting, so a retriever's "
        "first query does not (see llama_index_minirag.build_vectors)."))

    _extractor: Any = PrivateAttr(default=None)
    _embedder: Any = PrivateAttr(default=None)
    _vectors: Any = PrivateAttr(default=None)

    def __init__(self, llm: Optional[LLM] = None, *, extractor: Optional[Extractor] = None,
                 embed_model: Any = None, **kwargs: Any) -> None:
        """``embed_model``: a core ``Embedder`` or LlamaIndex ``BaseEmbedding`` for the offline
        extractor's typing and for token counts (default: the bundled all-MiniLM-L6-v2)."""
        super().__init__(llm=llm, **kwargs)
        self._extractor = extractor
        self._embedder = embed_model

    @classmethod
    def class_name(cls) -> str:
        return "MiniRAGExtractor"

    @property
    def embedder(self) -> Any:
        if self._embedder is None or not hasattr(self._embedder, "count_tokens"):
            self._embedder = as_core_embedder(self._embedder)
        return self._embedder

    @property
    def core_extractor(self) -> Extractor:
        if self._extractor is None:
            if self.llm is None:
                from minirag_core.extraction.offline_extractor import OfflineExtractor

                self._extractor = OfflineExtractor(self.embedder)
            else:
                from minirag_core.extraction.llm_extractor import LLMExtractor
                from minirag_core.extraction.offline_extractor import OfflineExtractor

                self._extractor = LLMExtractor(LlamaIndexLLMBackend(self.llm), entity_types=self.entity_types,
                                               max_gleaning=self.max_gleaning, max_concurrency=self.num_workers,
                                               fallback=OfflineExtractor(self.embedder))
        return self._extractor

    # -- writing the records --------------------------------------------------------------
    def _annotate(self, node: BaseNode, chunk: Chunk, extraction: ExtractionResult) -> None:
        entities, relations, subjects = chunk_records(chunk, extraction)
        kg_nodes = node.metadata.pop(KG_NODES_KEY, None) or []
        kg_relations = node.metadata.pop(KG_RELATIONS_KEY, None) or []
        by_id: Dict[str, EntityNode] = {}
        for entity_id, record in entities.items():
            entity = EntityNode(name=record["name"], label=record["type"] or UNKNOWN_TYPE,
                                properties={"entity_id": entity_id, "entity_type": record["type"],
                                            "description": record["description"]})
            by_id[entity_id] = entity
            kg_nodes.append(entity)
        stash: Dict[str, list] = {}
        for (source, target), record in relations.items():
            kg_relations.append(Relation(
                label=self.relation_label, source_id=by_id[source].id, target_id=by_id[target].id,
                properties={"description": record["description"], "keywords": record["keywords"],
                            "weight": float(record["weight"])}))
            stash.setdefault(source, []).append(
                [target, record["description"], record["keywords"], float(record["weight"])])
        for position, (entity_id, record) in enumerate(entities.items()):
            properties = {"description": record["description"], "entity_id": entity_id,
                          "entity_name": record["name"], "entity_type": record["type"], "position": position}
            if entity_id in stash:
                properties["chunk_relations"] = json.dumps(stash[entity_id], ensure_ascii=False)
            if entity_id in subjects:
                properties["subject"] = True
            kg_relations.append(Relation(label=self.mention_label, source_id=by_id[entity_id].id,
                                         target_id=node.node_id, properties=properties))
        node.metadata[KG_NODES_KEY] = kg_nodes
        node.metadata[KG_RELATIONS_KEY] = kg_relations
        # the lists are large and leave the metadata when the index stores the node, but keep
        # them out of embedding / LLM text if the node is used elsewhere first
        for excluded in (node.excluded_embed_metadata_keys, node.excluded_llm_metadata_keys):
            for key in (KG_NODES_KEY, KG_RELATIONS_KEY):
                if key not in excluded:
                    excluded.append(key)

    def _prepare(self, extracted: list[tuple[Chunk, ExtractionResult]]) -> None:
        """Embed the retrieval texts of the graph items ``extracted`` changed."""
        if not self.prepare_vectors:
            return
        if self._vectors is None:
            self._vectors = BuildVectors(self.embedder)
        self._vectors.add(extracted)

    def _batches(self, nodes: Sequence[BaseNode]) -> list[list[tuple[BaseNode, Chunk]]]:
        pairs = [(n, node_to_chunk(n, position_in_document(n), self.embedder)) for n in nodes]
        return [pairs[i:i + self.batch_size] for i in range(0, len(pairs), self.batch_size)]

    def __call__(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> Sequence[BaseNode]:
        """Extract from ``nodes`` (in place) and return them."""
        progress = show_progress or self.show_progress
        extracted: list[tuple[Chunk, ExtractionResult]] = []
        for batch in self._batches(nodes):
            results = self.core_extractor.extract([c for _, c in batch], show_progress=progress)
            for (node, chunk), result in zip(batch, results):
                self._annotate(node, chunk, result)
                extracted.append((chunk, result))
        self._prepare(extracted)
        return nodes

    async def acall(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> Sequence[BaseNode]:
        """Async :meth:`__call__` (model calls run concurrently, ``num_workers`` at a time)."""
        progress = show_progress or self.show_progress
        extracted: list[tuple[Chunk, ExtractionResult]] = []
        for batch in await asyncio.to_thread(self._batches, nodes):
            results = await self.core_extractor.aextract([c for _, c in batch], show_progress=progress)
            for (node, chunk), result in zip(batch, results):
                self._annotate(node, chunk, result)
                extracted.append((chunk, result))
        await asyncio.to_thread(self._prepare, extracted)
        return nodes
