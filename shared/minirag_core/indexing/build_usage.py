"""The model tokens spent building an index, added up over its writes in the workdir
(``minirag info`` reads them; ``InsertReport.token_usage`` has each write's own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minirag_core.llm.usage import TokenUsage
from minirag_core.storage.base import atomic_write_json, read_json

BUILD_USAGE_FILE = "llm_token_usage.json"


def record_build_usage(workdir: Path | None, usage: TokenUsage) -> dict[str, Any]:
    """Add one write's ``usage`` to the workdir's total (nothing is written for a write that
    called no model); returns the write's own counts."""
    if workdir is not None and usage.calls:
        total = read_build_usage(workdir)
        total.merge(usage)
        atomic_write_json(workdir / BUILD_USAGE_FILE, total.to_dict())
    return usage.to_dict()


def read_build_usage(workdir: Path) -> TokenUsage:
    """The workdir's total so far (zeros for an index built without a model)."""
    try:
        data = read_json(workdir / BUILD_USAGE_FILE, None)
    except ValueError:  # a damaged file counts as none: the counts are a report, not index data
        data = None
    return TokenUsage.from_dict(data if isinstance(data, dict) else None)
