"""A query takes no write lock and writes nothing: beside a writer it answers at once, and it
answers on a workdir it cannot write (light mode from the relation vectors there are, noted)."""

from __future__ import annotations

import ctypes
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.indexing.relation_vectors import INCOMPLETE_NOTE
from minirag_core.indexing.workdir_lock import WorkdirLock
from minirag_core.types import Document
from stand_ins import HashEmbedder, NameListExtractor, NameMapper

TESTS = Path(__file__).resolve().parents[2]
DOCS = [Document(f"d{i}", f"Ann{i} met Bob{i} at the market. Bob{i} sold apples to Cid{i} and Ann{i + 1}.")
        for i in range(6)]
QUESTION = "What did Bob2 sell to Cid2?"


def _open(path: Path, **kwargs) -> MiniRAGIndex:
    return MiniRAGIndex(path, embedder=HashEmbedder(), extractor=NameListExtractor(), query_mapper=NameMapper(),
                        **kwargs)


@pytest.mark.parametrize("keep_relations", [True, False])
def test_a_light_query_beside_a_held_write_lock_answers_at_once(tmp_path, keep_relations) -> None:
    _open(tmp_path / "wd", index_relations=keep_relations).insert(DOCS)
    reader = _open(tmp_path / "wd", lock_timeout=5)
    with WorkdirLock(tmp_path / "wd"):  # another process is writing
        started = time.monotonic()
        result = reader.query(QUESTION, mode="light")
        elapsed = time.monotonic() - started
    assert result.chunks and elapsed < 2.0
    assert (INCOMPLETE_NOTE in result.notes) is not keep_relations  # said when it had not them all


def _read_only(path: Path) -> None:
    """No write bit on the workdir and its files; embedded Chroma's own folder is left writable (it
    writes its database whenever it opens one, whoever asks)."""
    for item in [path, *(p for p in path.rglob("*") if "chroma" not in p.relative_to(path).parts)]:
        item.chmod(item.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _without_root_override() -> None:
    """As root, give up the capabilities that write past permission bits (in the child only)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 3):  # CAP_DAC_OVERRIDE, CAP_FOWNER
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _query_in_child(workdir: Path, mode: str, write_probe: bool = False) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(TESTS)!r})
        from stand_ins import HashEmbedder, NameListExtractor, NameMapper
        from minirag_core.indexing.index import MiniRAGIndex
        if {write_probe!r}:
            open({str(workdir / 'probe')!r}, 'w')
        index = MiniRAGIndex({str(workdir)!r}, embedder=HashEmbedder(), extractor=NameListExtractor(),
                             query_mapper=NameMapper())
        result = index.query({QUESTION!r}, mode={mode!r})
        print(json.dumps({{"chunks": [c.chunk_id for c in result.chunks], "notes": result.notes}}))
    """)
    return subprocess.run([sys.executable, "-c", code], preexec_fn=_without_root_override, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="drops root's override with Linux prctl")
@pytest.mark.parametrize("keep_relations", [True, False])
def test_a_light_query_on_a_read_only_workdir_answers(tmp_path, keep_relations) -> None:
    workdir = tmp_path / "wd"
    _open(workdir, index_relations=keep_relations).insert(DOCS)
    expected = [c.chunk_id for c in _open(workdir).query(QUESTION, mode="light").chunks]
    _read_only(workdir)
    try:
        refused = _query_in_child(workdir, "light", write_probe=True)
        assert refused.returncode != 0 and "Permission denied" in refused.stderr  # the child cannot write
        mini, light = _query_in_child(workdir, "mini"), _query_in_child(workdir, "light")
        assert mini.returncode == 0 and light.returncode == 0, mini.stderr + light.stderr
        assert json.loads(mini.stdout.splitlines()[-1])["chunks"]
        found = json.loads(light.stdout.splitlines()[-1])
        assert found["chunks"] == expected and (INCOMPLETE_NOTE in found["notes"]) is not keep_relations
    finally:
        for item in [workdir, *workdir.rglob("*")]:
            item.chmod(item.stat().st_mode | stat.S_IWUSR)
