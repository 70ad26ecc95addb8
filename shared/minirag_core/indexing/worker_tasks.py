"""What one worker does with a batch: extract its chunks and embed the texts the writer will ask
for (``prepare``), with the extractor and embedder the worker was started with (``init_worker``,
``prepare_in_worker``). Run in spawned processes (``workers.py``) or as Ray tasks (``ray_backend.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx
import numpy as np

from minirag_core.embedding.base import Embedder
from minirag_core.embedding.windows import text_windows
from minirag_core.extraction.base import Extractor
from minirag_core.graph import heterogeneous as graph_ops
from minirag_core.graph.records import RELATION
from minirag_core.indexing.cached_extraction import extract_isolating_failures
from minirag_core.search.graph_vectors import chunk_vector_text, relation_text
from minirag_core.search.vectors import relation_has_meaning
from minirag_core.types import Chunk, ExtractionResult


@dataclass
class Prepared:
    """A batch's extraction results (None: the chunk failed) and vectors by text, with the
    process that made them and how many extractor / embedder pairs it held (0: the writer)."""

    extractions: list[ExtractionResult | None]
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    pid: int = field(default_factory=os.getpid)
    models_held: int = 0


def expected_texts(embedder: Embedder, chunks: Sequence[Chunk], extractions: Sequence[ExtractionResult | None],
                   index_relations: bool = True) -> tuple[list[str], list[str]]:
    """The chunk windows and the short texts (entity names, relation texts) the writer embeds
    for ``chunks`` when their entities and relations are new to the graph."""
    g = nx.Graph()
    windows: list[str] = []
    for chunk, extraction in zip(chunks, extractions):
        graph_ops.add_chunk(g, chunk, extraction or ExtractionResult())
    names = sorted({g.nodes[n]["name"] for n in g.nodes if g.nodes[n].get("kind") != graph_ops.CHUNK})
    for chunk in chunks:
        windows += text_windows(embedder, chunk_vector_text(g, chunk.id))
    relations = sorted(relation_text(g, u, v) for u, v, kind in g.edges(data="kind")
                       if index_relations and kind == RELATION and relation_has_meaning(g.edges[u, v]["keywords"]))
    return list(dict.fromkeys(windows)), names + relations


def prepare(extractor: Extractor, embedder: Embedder, chunks: list[Chunk], index_relations: bool = True) -> Prepared:
    """A worker's job: extract ``chunks`` and embed what the writer will ask for."""
    extractions = extract_isolating_failures(extractor, chunks)
    windows, short = expected_texts(embedder, chunks, extractions, index_relations)
    vectors: dict[str, np.ndarray] = {}
    for texts in (windows, short):
        if texts:
            vectors.update(zip(texts, np.asarray(embedder.embed(texts), dtype=np.float32)))
    return Prepared(extractions, vectors)


# -- worker processes -------------------------------------------------------------------------
#: this worker process's extractor and embedder, by the key of the pool that sent them: one pair
#: (``init_worker`` drops an earlier pool's)
_STATE: dict[str, tuple[Extractor, Embedder]] = {}


def worker_state(extractor: Extractor, embedder: Embedder) -> tuple[Extractor, Embedder]:
    """What a worker is started with, checked to travel to another process (the pool and Ray
    serialise it themselves; one tuple, so an embedder the extractor shares stays one object)."""
    try:
        from multiprocessing.reduction import ForkingPickler  # what the pool will send it with

        ForkingPickler.dumps((extractor, embedder))
    except Exception as exc:  # noqa: BLE001 - pickle raises several types
        raise ValueError(f"workers > 1 needs an extractor and embedder that pickle ({exc}); "
                         "use workers=1 with this one") from exc
    return extractor, embedder


def init_worker(key: str, state: tuple[Extractor, Embedder], threads: int) -> None:
    """Keep ``state`` for this process's batches (in place of any other pool's), with torch on
    ``threads`` threads."""
    if key in _STATE:
        return
    _STATE.clear()
    try:
        import torch

        torch.set_num_threads(max(1, threads))
    except ImportError:  # pragma: no cover - an embedder without torch
        pass
    _STATE[key] = state


def init_process_worker(key: str, state: tuple[Extractor, Embedder], threads: int) -> None:
    """``init_worker`` in a pool's own process, which then ends without the interpreter's
    teardown (seconds, with torch and spaCy loaded): it holds nothing to save, its results went
    back with each batch."""
    import atexit

    init_worker(key, state, threads)
    atexit.register(os._exit, 0)  # the last registered, the first run at exit


def prepare_in_worker(key: str, chunks: list[Chunk], index_relations: bool) -> Prepared:
    """``prepare`` with the extractor and embedder this process was started with."""
    extractor, embedder = _STATE[key]
    prepared = prepare(extractor, embedder, chunks, index_relations)
    prepared.models_held = len(_STATE)
    return prepared
