"""``MiniRAGTokenSplitter``: the core's chunks as a LlamaIndex node parser.

The core cuts a document into windows of ``chunk_tokens`` word pieces of the embedding model
(overlapping by ``chunk_overlap``), the chunks every figure in ``benchmarks/RESULTS.md`` was
measured on. LlamaIndex's default node parser cuts long documents elsewhere, so a
``PropertyGraphIndex`` built through it holds other chunks and ranks differently; with
``transformations=[MiniRAGTokenSplitter()]`` it holds the core's chunks and ranks as the core does.
"""

from __future__ import annotations

from typing import Any, List

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser.interface import TextSplitter

from minirag_core.indexing.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS, iter_chunks
from minirag_core.types import Document

from .adapters import as_core_embedder

__all__ = ["MiniRAGTokenSplitter"]


class MiniRAGTokenSplitter(TextSplitter):
    """Token windows of the embedding model, exactly as ``MiniRAGIndex`` chunks a document."""

    chunk_tokens: int = Field(default=DEFAULT_CHUNK_TOKENS, gt=0, description="Word pieces per chunk.")
    chunk_overlap: int = Field(default=DEFAULT_CHUNK_OVERLAP, ge=0, description="Word pieces two chunks share.")

    _embedder: Any = PrivateAttr(default=None)

    def __init__(self, embed_model: Any = None, **kwargs: Any) -> None:
        """``embed_model``: a core ``Embedder`` or LlamaIndex ``BaseEmbedding`` whose tokenizer
        measures the windows (default: the bundled all-MiniLM-L6-v2, as in the core)."""
        super().__init__(**kwargs)
        if self.chunk_overlap >= self.chunk_tokens:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be below chunk_tokens ({self.chunk_tokens})")
        self._embedder = embed_model

    @classmethod
    def class_name(cls) -> str:
        return "MiniRAGTokenSplitter"

    @property
    def embedder(self) -> Any:
        if self._embedder is None or not hasattr(self._embedder, "token_windows"):
            self._embedder = as_core_embedder(self._embedder)
        return self._embedder

    def split_text(self, text: str) -> List[str]:
        return [chunk.text for chunk in iter_chunks(Document(id="text", text=text), self.embedder,
                                                    chunk_tokens=self.chunk_tokens, overlap_tokens=self.chunk_overlap)]
