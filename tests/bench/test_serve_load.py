"""The load benchmark of ``minirag serve``, run small: concurrent mixed operations leave no 5xx,
every acknowledged write and delete holds, graph and vectors agree, before and after a SIGKILL
in the middle of an insert; and its check does see a lost or a stale document."""

from __future__ import annotations

import json

import pytest

from benchmarks.scale.bench_serve_load import check_workdir, main

pytestmark = pytest.mark.slow


def test_small_load_run_passes_its_checks(tmp_path):
    out, workdir = tmp_path / "serve_load.json", tmp_path / "workdir"
    result = main(["--clients", "4", "--ops", "40", "--out", str(out), "--workdir", str(workdir)])

    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    load = result["load"]
    assert load["server_errors_5xx"] == 0, load["error_samples"]
    assert load["operations"] == 4 * 40
    assert {"query_mini", "query_light", "query_naive", "insert", "reinsert", "delete"} <= set(load["per_kind"])
    assert result["check_after_load"]["problems"] == []
    assert result["check_after_load"]["checked_ids"] > 4
    assert result["check_after_kill"]["problems"] == []
    assert result["kill_during_insert"]["killed_insert"] in ("absent", "complete")
    assert result["checks_pass"]

    # the same check on expectations the workdir does not meet: a lost insert, a stale text, a live delete
    present = check_workdir(workdir, {"seed-0": "a text never sent", "never-sent": "x"})
    assert any("never-sent: insert acknowledged, absent" in p for p in present["problems"])
    assert any(p.startswith("seed-0: holds another text") for p in present["problems"])
    deleted = check_workdir(workdir, {"seed-1": None})
    assert deleted["problems"] == ["seed-1: delete acknowledged, still present"]
