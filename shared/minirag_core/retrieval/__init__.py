"""Retrieval (Sec. 3.2): query mapping (``query/``), eq. 2 and eq. 3 (``topology/``), the project's
additions (``extensions/``) and the modes (``modes/``), over a ``RetrievalSources``.
May import: ``graph``, ``storage``, ``search``, ``extraction``, ``embedding``, ``llm`` and the top-level modules.

Callers use :func:`minirag_core.retrieval.pipeline.retrieve` (also exported here). Names are
loaded lazily, so importing a submodule (e.g. ``retrieval.sources``) does not import every mode.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

MODES = ("mini", "light", "naive")

_EXPORTS = {
    "retrieve_light": ".modes.light", "retrieve_mini": ".modes.mini", "retrieve_naive": ".modes.naive",
    "RetrievalSources": ".sources", "retrieve": ".pipeline", "aretrieve": ".pipeline",
    "check_mode": ".pipeline",
}

__all__ = ["MODES", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name], __name__), name)
