"""A workdir's manifest: the settings its vectors and chunks were built with, checked on open."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from minirag_core.embedding.base import Embedder
from minirag_core.storage.base import atomic_write_json, read_json

#: raised whenever what a workdir holds changes meaning; ``MIGRATIONS`` says how an older one catches up
SCHEMA_VERSION = 2
#: version -> what changed on the way to the next one. "chunk_vectors": the text a chunk is embedded
#: as changed (2: entity-chunk descriptions joined to it, bounded by ``RANKING_EXTRA_SHARE``), so the
#: chunk vectors are embedded again; the graph and the other vectors stay as they are.
MIGRATIONS: dict[int, tuple[str, ...]] = {1: ("chunk_vectors",)}


class IndexSettingsMismatch(RuntimeError):
    """The workdir was built with settings that differ from the ones given now."""


def manifest(embedder: Embedder, chunk_tokens: int, chunk_overlap: int,
             namespace: str | None = None) -> dict[str, Any]:
    """What a workdir must be reopened with (a workdir of before namespaces has none: None)."""
    return {"schema_version": SCHEMA_VERSION, "embedding_model": embedder.name,
            "embedding_dim": int(embedder.dim), "chunk_tokens": chunk_tokens, "chunk_overlap": chunk_overlap,
            "namespace": namespace}


def check_manifest(workdir: Path | None, wanted: dict[str, Any]) -> tuple[str, ...]:
    """Write the manifest of a new workdir; raise ``IndexSettingsMismatch`` when an existing
    one was built with other settings or a schema it cannot catch up from. Returns the
    migrations an older schema needs (``MIGRATIONS``; then :func:`mark_migrated`), else ()."""
    if workdir is None:
        return ()
    path = workdir / "manifest.json"
    found = read_json(path, None)
    if found is None:
        atomic_write_json(path, wanted)
        return ()
    diffs = {k: (found.get(k), v) for k, v in wanted.items() if k != "schema_version" and found.get(k) != v}
    if diffs:
        detail = ", ".join(f"{k}: built with {a!r}, opened with {b!r}" for k, (a, b) in diffs.items())
        raise IndexSettingsMismatch(f"{workdir} was built with other settings ({detail}). "
                                    "Open it with the same settings or index into a new workdir.")
    return migrations_from(workdir, found.get("schema_version"))


def migrations_from(workdir: Path, version: Any) -> tuple[str, ...]:
    """What a workdir of schema ``version`` needs to reach ``SCHEMA_VERSION``; refused (with the
    command that rebuilds it) when no migration leads there."""
    if version == SCHEMA_VERSION:
        return ()
    if isinstance(version, int) and version > SCHEMA_VERSION:
        raise IndexSettingsMismatch(f"{workdir} has schema version {version}, newer than this minirag reads "
                                    f"({SCHEMA_VERSION}): upgrade minirag to open it.")
    steps = [MIGRATIONS.get(v) for v in range(version, SCHEMA_VERSION)] if isinstance(version, int) else [None]
    if any(step is None for step in steps):
        raise IndexSettingsMismatch(f"{workdir} has schema version {version!r}, which this minirag cannot bring "
                                    f"up to {SCHEMA_VERSION}. Rebuild it from its files: {rebuild_command(workdir)}")
    return tuple(dict.fromkeys(m for step in steps for m in step or ()))


def rebuild_command(workdir: Path) -> str:
    """The shell command that rebuilds ``workdir`` from the files (``PATH ...``) it was built from."""
    return f"rm -r {shlex.quote(str(workdir))} && minirag index PATH ... --workdir {shlex.quote(str(workdir))}"


def mark_migrated(workdir: Path | None) -> None:
    """Record that the workdir caught up with ``SCHEMA_VERSION``."""
    if workdir is None:
        return
    path = workdir / "manifest.json"
    atomic_write_json(path, {**read_json(path, {}), "schema_version": SCHEMA_VERSION})
