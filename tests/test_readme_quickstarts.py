"""The README, executed as written: the three quick starts (Python blocks, in a fresh interpreter)
and every command block (bash, with ``minirag`` running this checkout's code), from a clean
folder that holds the checkout's examples; the install lines in a fresh virtual environment; the
test command is what ``.ci/run`` runs. A code block the tests do not run fails the first test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"<!-- quickstart:(\w+) -->\s*```python\n(.*?)```", re.DOTALL)
RUN = re.compile(r"<!-- run:(\w+) -->\s*```bash\n(.*?)```", re.DOTALL)
TEST_COMMAND = "bash scripts/run_tests.sh"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}


def readme_quickstarts() -> dict[str, str]:
    return dict(BLOCK.findall(README))


def readme_commands() -> dict[str, str]:
    return dict(RUN.findall(README))


def test_readme_marks_the_three_quickstarts():
    assert set(readme_quickstarts()) == {"python", "langchain", "llamaindex"}


def test_readme_is_short_and_every_code_block_is_run():
    assert len(README.splitlines()) <= 250
    blocks = re.findall(r"```(\w*)\n(.*?)```", README, re.DOTALL)
    ran = set(readme_quickstarts().values()) | set(readme_commands().values())
    not_run = [body for lang, body in blocks if lang in ("bash", "python", "sh") and body not in ran]
    assert not_run == [f"{TEST_COMMAND}\n"], not_run  # the test command is .ci/run's (next test)
    assert set(readme_commands()) == {"install", "main", "cli", "serve", "chroma"}


def test_the_readme_test_command_is_what_ci_runs():
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert TEST_COMMAND in ci


def test_readme_results_block_is_one_table():
    block = README.split("<!-- benchmark:start -->", 1)[1].split("<!-- benchmark:end -->", 1)[0]
    assert sum(line.startswith("|---") for line in block.splitlines()) == 1 and "run_suite.py" in block


def _clean_checkout(tmp_path: Path) -> Path:
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "examples").symlink_to(REPO / "examples")  # the snippet's relative paths, a clean cwd
    return work


@pytest.mark.slow
@pytest.mark.parametrize("name", ["python", "langchain", "llamaindex"])
def test_quickstart_runs_as_written(name, tmp_path):
    code = readme_quickstarts()[name]
    done = subprocess.run([sys.executable, "-c", code], cwd=_clean_checkout(tmp_path), env=ENV, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the quick start printed nothing"
    assert "Wolfgang" in done.stdout or "20260108_1100" in done.stdout


@pytest.mark.slow
def test_readme_commands_run_as_written(tmp_path):
    """The main job, the command-line tour, ``minirag serve`` and a Chroma server, in the
    README's order; ``minirag`` is this checkout's command line, ``chroma`` the environment's."""
    work = _clean_checkout(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "minirag"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m minirag_core.interfaces.cli "$@"\n')
    shim.chmod(0o755)
    env = {**ENV, "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), ENV["PATH"]]),
           "PYTHONPATH": os.pathsep.join([str(REPO / "shared"), str(REPO)])}
    outputs = {}
    for name in ["main", "cli", "serve", "chroma"]:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_commands()[name]], cwd=work, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (name, done.stdout[-2000:], done.stderr[-3000:])
        outputs[name] = done.stdout
    assert "Wolfgang" in outputs["main"] and "reasoning paths:" in outputs["main"]
    assert '"documents": 35' in outputs["cli"] and "deleted lihuaworld_sample/20260105_1100.txt" in outputs["cli"]
    assert (work / "lunch.html").exists() and re.search(r"^minirag \S+$", outputs["cli"], re.MULTILINE)
    served = json.loads(outputs["serve"])
    assert len(served["chunks"]) == 3 and served["mode"] == "mini"
    assert "20260108_1100.txt" in outputs["chroma"] and (work / "served.workdir" / "chroma_server.json").exists()


@pytest.mark.slow
def test_readme_install_lines_take_torch_for_the_cpu(tmp_path):
    """The install block in a fresh virtual environment: torch installs as the CPU build, after which
    the project's own line needs neither torch again nor a CUDA package (its resolution is checked
    with ``--dry-run``, so the test installs torch but not the rest)."""
    work = tmp_path / "checkout"
    shutil.copytree(REPO, work, ignore=shutil.ignore_patterns(".git", ".venv", "*.workdir", "__pycache__", "out"))
    lines = [line for line in readme_commands()["install"].splitlines() if line.strip()]
    assert lines[-1].startswith("pip install -e ")
    script = "\n".join(lines[:-1] + [lines[-1] + " --dry-run --quiet --report report.json",
                                     'python -c "import torch; print(torch.__version__)"'])
    env = {k: v for k, v in ENV.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env={**env, "PIP_RETRIES": "0"},
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].endswith("+cpu"), done.stdout
    planned = [item["metadata"]["name"].lower() for item in json.loads((work / "report.json").read_text())["install"]]
    assert "torch" not in planned and not [p for p in planned if p.startswith("nvidia") or p == "triton"], planned


def test_the_results_headline_is_one_table_with_its_command():
    sys.path.insert(0, str(REPO))
    from benchmarks.quality.suite_report import readme_headline

    overall = lambda r5, all5: {"overall": {"recall@5": r5, "all_evidence@5": all5}}  # noqa: E731
    results = {"commit": "abcdef123", "split": "test", "seconds_total": 300, "machine": {"cpu_count": 2},
               "sets": [{"set": "tiny", "n_questions": 3, "index": {"chunks": 9},
                         "summary": {"mini": overall(90.0, 80.0), "naive": overall(70.0, 50.0)}}]}
    text = readme_headline(results)
    assert sum(line.startswith("|---") for line in text.splitlines()) == 1
    assert "| **mini** | 90.0 / 80.0 |" in text and "| naive | 70.0 / 50.0 |" in text and "light" not in text
    assert "benchmarks/quality/run_suite.py --write-results`" in text and "`abcdef1`" in text
    text = readme_headline({**results, "flags": ["--except", "li-pg,linearrag"]})
    assert "benchmarks/quality/run_suite.py --write-results --except li-pg,linearrag`" in text
