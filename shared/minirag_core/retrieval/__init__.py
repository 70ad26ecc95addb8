"""Retrieval modes over a ``RetrievalSources``: mini (MiniRAG), light (LightRAG-style), naive.

Callers use :func:`minirag_core.retrieval.pipeline.retrieve` (also exported here). Names are
loaded lazily, so importing a submodule (e.g. ``retrieval.sources``) does not import every mode.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

MODES = ("mini", "light", "naive")

_EXPORTS = {
    "retrieve_light": ".light", "retrieve_mini": ".mini", "retrieve_naive": ".naive",
    "RetrievalSources": ".sources", "retrieve": ".pipeline", "aretrieve": ".pipeline",
    "check_mode": ".pipeline",
}

__all__ = ["MODES", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name], __name__), name)
