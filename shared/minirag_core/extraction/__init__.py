"""Entity and relationship extraction (Sec. 3.1)."""

from .base import Extractor, QueryMapper

__all__ = ["Extractor", "QueryMapper"]
