"""The README's results command, run as written (``.venv/bin/python benchmarks/quality/run_suite.py
--write-results``) in a copy of the checkout whose kit beside it holds a slice of each development
set: a few test-half questions with their evidence and some other documents, in the kit's own
formats. It must finish, write RESULTS.md and regenerate the README's table with every set."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets, lihuaworld  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
KIT = Path(os.environ.get("MINIRAG_DATA_ROOT") or REPO.parent / "shared" / "data")
QUESTIONS, OTHERS = 2, 6
COMMAND = re.compile(r"`(\.venv/bin/python benchmarks/quality/run_suite\.py[^`]*)`")


def _chosen(name: str) -> tuple[list[str], set[str]]:
    """Ids of a few test-half questions with evidence, and the documents to keep."""
    data = devsets.load(name, KIT)
    questions = [q for q in data.half("test") if q.has_evidence][:QUESTIONS]
    keep = {e for q in questions for e in q.evidence}
    keep |= set([d.id for d in data.documents if d.id not in keep][:OTHERS])
    return [q.id for q in questions], keep


def _slice_passages(name: str, target: Path) -> None:
    ids, keep = _chosen(name)
    corpus = json.loads((KIT / name / "corpus.json").read_text(encoding="utf-8"))
    rows = json.loads((KIT / name / "questions.json").read_text(encoding="utf-8"))
    target.mkdir(parents=True)
    (target / "corpus.json").write_text(json.dumps([r for r in corpus if str(r["id"]) in keep]), encoding="utf-8")
    (target / "questions.json").write_text(json.dumps([r for r in rows if str(r["id"]) in ids]), encoding="utf-8")


def _slice_site(name: str, target: Path) -> None:
    ids, keep = _chosen(name)
    for page in keep:
        (target / "corpus" / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(KIT / name / "corpus" / page, target / "corpus" / page)
    rows = json.loads((KIT / name / "questions.json").read_text(encoding="utf-8"))
    (target / "questions.json").write_text(json.dumps([r for r in rows if str(r["id"]) in ids]), encoding="utf-8")


def _slice_sessions(name: str, target: Path) -> None:
    ids, keep = _chosen(name)
    source = KIT / name
    for path in lihuaworld.corpus_files(source):
        if lihuaworld.session_id(path.read_text(encoding="utf-8")) in keep:
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target / path.relative_to(source))
    rows = json.loads((source / "qa_dev.json").read_text(encoding="utf-8"))
    (target / "qa_dev.json").write_text(json.dumps([r for r in rows if str(r["id"]) in ids]), encoding="utf-8")


@pytest.mark.slow
@pytest.mark.skipif(not KIT.is_dir(), reason="the development sets' kit is not beside the checkout")
def test_the_readme_results_command_runs_as_written(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- benchmark:start -->", 1)[1].split("<!-- benchmark:end -->", 1)[0]
    command = COMMAND.search(block).group(1)
    work = tmp_path / "checkout"
    shutil.copytree(REPO, work, ignore=shutil.ignore_patterns(".git", ".venv", "out", "*.workdir", "__pycache__",
                                                              "*.egg-info", "results"))
    python = work / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    sets = devsets.available(KIT)
    for name in sets:
        target = tmp_path / "shared" / "data" / name
        if (KIT / name / "qa_dev.json").is_file():
            _slice_sessions(name, target)
        elif (KIT / name / "corpus.json").is_file():
            _slice_passages(name, target)
        else:
            _slice_site(name, target)
    env = {k: v for k, v in os.environ.items() if k not in ("MINIRAG_DATA_ROOT", "LIHUAWORLD_DIR")}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=work, timeout=1500,
                          env={**env, "HF_HUB_OFFLINE": "1", "MINIRAG_LINEARRAG_DIR": str(tmp_path / "no-peer")},
                          capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    table = (work / "README.md").read_text(encoding="utf-8").split("<!-- benchmark:start -->", 1)[1]
    header = next(line for line in table.splitlines() if line.startswith("| recall@5"))
    assert [n for n in sets if f"{n} ({QUESTIONS} q," in header] == sets, header
    assert re.search(r"^\| \*\*mini\*\* \| \d", table, re.MULTILINE) and COMMAND.search(table)
    assert (work / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8") != \
        (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
