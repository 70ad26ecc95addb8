"""A workdir's manifest: the settings its vectors and chunks were built with, checked on open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minirag_core.embedding.base import Embedder
from minirag_core.storage.base import atomic_write_json, read_json

SCHEMA_VERSION = 1


class IndexSettingsMismatch(RuntimeError):
    """The workdir was built with settings that differ from the ones given now."""


def manifest(embedder: Embedder, chunk_tokens: int, chunk_overlap: int) -> dict[str, Any]:
    """What a workdir must be reopened with."""
    return {"schema_version": SCHEMA_VERSION, "embedding_model": embedder.name,
            "embedding_dim": int(embedder.dim), "chunk_tokens": chunk_tokens, "chunk_overlap": chunk_overlap}


def check_manifest(workdir: Path | None, wanted: dict[str, Any]) -> None:
    """Write the manifest of a new workdir; raise ``IndexSettingsMismatch`` when an existing
    one was built with other settings."""
    if workdir is None:
        return
    path = workdir / "manifest.json"
    found = read_json(path, None)
    if found is None:
        atomic_write_json(path, wanted)
        return
    diffs = {k: (found.get(k), v) for k, v in wanted.items() if found.get(k) != v}
    if diffs:
        detail = ", ".join(f"{k}: built with {a!r}, opened with {b!r}" for k, (a, b) in diffs.items())
        raise IndexSettingsMismatch(f"{workdir} was built with other settings ({detail}). "
                                    "Open it with the same settings or index into a new workdir.")
