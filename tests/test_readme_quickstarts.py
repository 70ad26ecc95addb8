"""The README's quick starts, executed exactly as written (each marked code block), from the
checkout root, in a fresh interpreter: what a new user copies must run on data in the checkout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- quickstart:(\w+) -->\s*```python\n(.*?)```", re.DOTALL)


def readme_quickstarts() -> dict[str, str]:
    return dict(BLOCK.findall((REPO / "README.md").read_text(encoding="utf-8")))


def test_readme_marks_the_three_quickstarts():
    assert set(readme_quickstarts()) == {"python", "langchain", "llamaindex"}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["python", "langchain", "llamaindex"])
def test_quickstart_runs_as_written(name, tmp_path):
    code = readme_quickstarts()[name]
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "examples").symlink_to(REPO / "examples")  # the snippet's relative paths, a clean cwd
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the quick start printed nothing"
    assert "Wolfgang" in done.stdout or "20260108_1100" in done.stdout
