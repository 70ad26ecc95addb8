"""Embedding backends."""

from .base import Embedder

__all__ = ["Embedder"]
