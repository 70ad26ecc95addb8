"""Entity and relationship extraction (Sec. 3.1): offline rules and spaCy, or a model's records; entity typing.
May import: ``graph``, ``embedding``, ``llm`` and the top-level modules."""

from minirag_core.extraction.base import Extractor, QueryMapper

__all__ = ["Extractor", "QueryMapper"]
