"""Light mode's relation vectors, embedded while indexing.

Only light mode searches relation vectors (mini ranks chunks by the graph's paths, naive by
chunk vectors); one vector per stated relation costs a share of an offline build
(``benchmarks/scale/bench_ingest.py``). Writes embed them (``index_relations=True``, the default)
or never (``False``); a query never does (it takes no lock and writes nothing), so a light query
on a workdir whose relation vectors are not complete answers from those it has and says so in
its notes. A marker file in the workdir records whether they are kept current, so a write with
``True`` after one with ``False`` embeds what that one left out.
"""

from __future__ import annotations

from pathlib import Path

from minirag_core.search.graph_vectors import relations_with_vectors, sync_vectors
from minirag_core.search.vectors import RELATIONS, VectorIndex
from minirag_core.storage.base import Change, GraphStore, atomic_write_json, read_json
from minirag_core.types import RetrievalResult

MARKER_FILE = "relation_vectors.json"
INCOMPLETE_NOTE = ("light mode searched the relation vectors this index has, not all it needs: the last write kept "
                   "none current (index_relations=False, or an index built before writes embedded them); the next "
                   "write with index_relations=True (the default), e.g. `minirag index` on the same files, embeds them")


class RelationVectorPolicy:
    """Whether writes keep relation vectors current (``kept``), and whether those stored are
    complete (``complete``: the marker, read without writing)."""

    def __init__(self, wanted: bool, marker: Path | None, vectors: VectorIndex) -> None:
        if wanted not in (True, False):
            raise ValueError(f"index_relations must be True or False, not {wanted!r}")
        self.wanted = wanted
        self._marker = marker
        self._vectors = vectors
        self._marked = False
        self.refresh()

    def refresh(self) -> None:
        """Read the marker again (another process may have written since). A workdir built
        before the marker existed kept them if it holds any."""
        if self._marker is None:
            return
        found = read_json(self._marker, None) if self._marker.exists() else None
        if found is None:
            self._marked = self._vectors.store.count(RELATIONS) > 0
            return
        self._marked = bool(isinstance(found, dict) and found.get("kept"))

    @property
    def kept(self) -> bool:
        """Whether writes embed the relations they add."""
        return self.wanted

    @property
    def complete(self) -> bool:
        """Whether every relation that gets a vector has one (as of the last write). Without a
        workdir, this process made every write: complete when it keeps them."""
        if self._marker is None:
            return self.wanted
        self.refresh()
        return self._marked

    def at_write(self) -> bool:
        """Before a write (under the workdir lock): read the marker, and say whether the relation
        vectors must be embedded first. A write that will not keep them current (``False``)
        says so in the marker, so that the next write that does embeds what it left out."""
        self.refresh()
        if self.wanted is False and self._marked:
            self._mark(False)
        return self.wanted is True and not self._marked

    def mark_kept(self) -> None:
        self._mark(True)

    def _mark(self, kept: bool) -> None:
        self._marked = kept
        if self._marker is not None:
            atomic_write_json(self._marker, {"kept": kept})


def embed_relation_vectors(graph_store: GraphStore, vectors: VectorIndex) -> int:
    """Bring the relation vectors in line with the graph: embed every relation that gets a
    vector and has none, or whose text changed while they were not kept, and drop vectors of
    relations the graph no longer has; the number embedded. The caller holds the write locks;
    the edges' text digests are saved with the graph."""
    wanted = relations_with_vectors(graph_store)
    present = vectors.store.ids(RELATIONS)
    vectors.delete(RELATIONS, sorted(present - set(wanted)))
    edges = sorted(wanted.values())
    g = graph_store.working_graph((), (), edges)
    before = {}
    for rel_id, (u, v) in wanted.items():
        if rel_id not in present:
            g.edges[u, v].pop("vector_hash", None)
        before[u, v] = g.edges[u, v].get("vector_hash")
    sync_vectors(g, vectors, (), edges, (), index_relations=True)
    changed = [e for e in edges if g.edges[e].get("vector_hash") != before[e]]
    if changed:
        graph_store.save(Change((), changed))
    return len(changed)


def noted_if_incomplete(policy: RelationVectorPolicy, result: RetrievalResult) -> RetrievalResult:
    """``result``, noting when light mode searched incomplete relation vectors (a query does not
    embed them)."""
    if result.mode == "light" and not policy.complete:
        result.notes.append(INCOMPLETE_NOTE)
    return result
