"""Embedding backends behind the ``Embedder`` protocol: the offline all-MiniLM-L6-v2 default and its encoders.
May import: ``minirag_core.scores`` and ``minirag_core.types`` only."""

from minirag_core.embedding.base import Embedder

__all__ = ["Embedder"]
