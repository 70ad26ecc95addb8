"""How MiniRAG reads and versions a LlamaIndex ``PropertyGraphStore``, one class per kind of store.

``get_triplets`` means different things on different stores (FalkorDB's returns only relations
between entity nodes, each twice; Ladybug's keeps no relation properties and at most 100 rows),
so the records :class:`~llama_index_minirag.extractor.MiniRAGExtractor` writes are read here
through each store's own query language where the generic interface loses them:

* :class:`StoreAccess` - any store: ``get()`` and ``get_triplets(relation_names=...)``, each
  relation once (the in-memory ``SimplePropertyGraphStore``);
* :class:`FalkorDBAccess` - openCypher over the store's graph: the ``MENTIONED_IN`` edges (one per
  entity and chunk, so each keeps its chunk's records) and chunk nodes, in insertion order;
* ``LadybugAccess`` (``ladybug_access``) - Ladybug keeps neither entity nor relation properties,
  so the records live in tables of their own, written after each write through the store.

Stores on a server or on disk also keep a version (a counter bumped after every write made
through a watched store object, plus the number of chunks), so a write from another process
is noticed with one small query.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from llama_index.core.graph_stores.types import ChunkNode, EntityNode, PropertyGraphStore, Relation

from .extractor import MENTIONED_IN, RELATED

__all__ = ["StoreAccess", "FalkorDBAccess", "Triplet", "written_items"]

Triplet = tuple[Any, Relation, Any]


class StoreAccess:
    """Reads through the generic ``PropertyGraphStore`` interface; no version (in-process stores)."""

    #: the store keeps a version other processes bump (see :meth:`version`)
    versioned = False

    def __init__(self, store: PropertyGraphStore, mention_label: str = MENTIONED_IN,
                 relation_label: str = RELATED) -> None:
        self.store = store
        self.mention_label = mention_label
        self.relation_label = relation_label

    @staticmethod
    def unique(triplets: Sequence[Any]) -> list[Triplet]:
        """Each (source, label, target) once, first copy kept, in the store's order."""
        seen: set[tuple[str, str, str]] = set()
        out = []
        for source, relation, target in triplets:
            key = (source.id, relation.label, target.id)
            if key not in seen:
                seen.add(key)
                out.append((source, relation, target))
        return out

    def read_all(self) -> tuple[list[Any], list[Triplet]]:
        """Every node, and every MiniRAG relation once."""
        nodes = list(self.store.get())
        try:
            triplets = list(self.store.get_triplets(relation_names=[self.mention_label, self.relation_label]))
        except KeyError as exc:
            # SimplePropertyGraphStore.delete(ids=[chunk]) also drops the entity nodes at the
            # other end of the chunk's relations, leaving relations to missing nodes behind
            raise RuntimeError(
                f"the property graph store holds relations to a missing node {exc}; with "
                "SimplePropertyGraphStore this follows deleting a chunk or document that shares "
                "entities with others - rebuild the index from the remaining documents") from exc
        return nodes, self.unique(triplets)

    def read_chunks(self, chunk_ids: Sequence[str], touched: Sequence[str]) -> tuple[list[Any], list[Triplet]]:
        """The chunk nodes ``chunk_ids`` and the MiniRAG relations of the nodes ``touched``."""
        nodes = [n for n in self.store.get(ids=list(chunk_ids)) if isinstance(n, ChunkNode)]
        triplets = self.store.get_triplets(ids=list(touched), relation_names=[self.mention_label,
                                                                             self.relation_label])
        return nodes, self.unique(triplets)

    def version(self) -> Optional[str]:
        """A token that changes with every write another process makes (None: not kept)."""
        return None

    def bump(self) -> None:
        """Record that a write went through this process's store object."""

    def before_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Store-specific bookkeeping before a write through a watched store."""

    def after_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Store-specific bookkeeping after a write through a watched store (then :meth:`bump`)."""
        self.bump()

    def after_failed_write(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Store-specific bookkeeping after a write that raised (then :meth:`bump`)."""
        self.bump()

    def close(self) -> None:
        """Close the store's connection, where it has one to close."""
        close = getattr(self.store, "close", None)
        if callable(close):
            close()


class FalkorDBAccess(StoreAccess):
    """``FalkorDBPropertyGraphStore`` read with openCypher queries. Its ``get_triplets`` only matches
    entity-to-entity relations (never ``MENTIONED_IN``, which ends at a chunk node) and
    returns each twice, and entity nodes keep the last chunk's properties: the per-chunk
    records are read from the ``MENTIONED_IN`` edges, which FalkorDB merges per (entity, chunk)."""

    versioned = True
    ENTITY = "__Entity__"
    CHUNK = "Chunk"
    VERSION = "__MiniRAGVersion__"

    def _query(self, cypher: str, params: Optional[dict[str, Any]] = None) -> list[list[Any]]:
        return self.store.client.query(cypher, params or {}).result_set

    def _chunks(self, where: str = "", params: Optional[dict[str, Any]] = None) -> list[ChunkNode]:
        rows = self._query(f"MATCH (c:{self.CHUNK}) {where} RETURN c.id, c.text, c {{.*, embedding: NULL, "
                           "id: NULL, text: NULL} ORDER BY id(c)", params)
        return [ChunkNode(id_=cid, text=text or "", properties={k: v for k, v in props.items() if v is not None})
                for cid, text, props in rows]

    def _relations(self, label: str, where: str = "", params: Optional[dict[str, Any]] = None,
                   target: str = ENTITY) -> list[Triplet]:
        rows = self._query(
            f"MATCH (s:{self.ENTITY})-[r:`{label}`]->(t:{target}) {where} "
            f"RETURN s.id, s.name, r {{.*}}, t.id, t.name ORDER BY id(r)", params)
        out = []
        for sid, sname, props, tid, tname in rows:
            source = EntityNode(name=sname or sid, label=self.ENTITY)
            other = (ChunkNode(id_=tid, text="") if target == self.CHUNK
                     else EntityNode(name=tname or tid, label=self.ENTITY))
            out.append((source, Relation(label=label, source_id=sid, target_id=tid,
                                         properties={k: v for k, v in props.items() if v is not None}), other))
        return out

    def read_all(self) -> tuple[list[Any], list[Triplet]]:
        chunks = self._chunks()
        triplets = (self._relations(self.mention_label, target=self.CHUNK)
                    + self._relations(self.relation_label))
        return list(chunks), triplets

    def read_chunks(self, chunk_ids: Sequence[str], touched: Sequence[str]) -> tuple[list[Any], list[Triplet]]:
        params = {"chunks": list(chunk_ids), "touched": list(touched)}
        chunks = self._chunks("WHERE c.id IN $chunks", params)
        triplets = (self._relations(self.mention_label, "WHERE t.id IN $chunks", params, target=self.CHUNK)
                    + self._relations(self.relation_label, "WHERE s.id IN $touched OR t.id IN $touched", params))
        return list(chunks), triplets

    def version(self) -> Optional[str]:
        rows = self._query(f"OPTIONAL MATCH (v:{self.VERSION}) WITH max(v.n) AS n "
                           f"MATCH (c:{self.CHUNK}) RETURN n, count(c)")
        n, chunks = rows[0] if rows else (None, 0)
        return f"{n or 0}:{chunks}"

    def bump(self) -> None:
        self._query(f"MERGE (v:{self.VERSION} {{id: 'version'}}) SET v.n = coalesce(v.n, 0) + 1")


def written_items(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The first argument of a write call (the nodes or relations written)."""
    return args[0] if args else next(iter(kwargs.values()), None)
