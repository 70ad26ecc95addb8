"""Retrieval modes over a ``RetrievalSources``: mini (MiniRAG), light (LightRAG-style), naive."""

from .light import retrieve_light
from .mini import retrieve_mini
from .naive import retrieve_naive
from .sources import RetrievalSources

MODES = ("mini", "light", "naive")

__all__ = ["MODES", "RetrievalSources", "retrieve_light", "retrieve_mini", "retrieve_naive"]
