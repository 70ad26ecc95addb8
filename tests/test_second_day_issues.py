"""Regression tests for issue 38, a new user's second day: servers, bad inputs, output and help.
Each failed before its fix; CLI items run ``minirag`` as a subprocess, the way a user types it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minirag_core.indexing.manifest import SCHEMA_VERSION
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.interfaces.cli import build_parser
from minirag_core.types import Document

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "lihuaworld_sample"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
       "PYTHONPATH": os.pathsep.join([str(REPO / "shared"), str(REPO), os.environ.get("PYTHONPATH", "")])}
LATIN1 = "Café owner José García serves crème brûlée every Friday."


def minirag(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minirag_core.interfaces.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """Six sample sessions, an unrelated note, a Latin-1 file and an empty one, indexed with --quiet."""
    corpus = tmp_path_factory.mktemp("corpus")
    for path in sorted(SAMPLE.glob("2026010[56]_*.txt")):  # six sessions
        shutil.copy(path, corpus / path.name)
    (corpus / "cafe.txt").write_bytes(LATIN1.encode("latin-1"))
    (corpus / "violins.txt").write_text("Marguerite Okafor repairs violins in the harbour workshop.", encoding="utf-8")
    (corpus / "empty.txt").write_text("  \n", encoding="utf-8")
    workdir = tmp_path_factory.mktemp("day2") / "wd"
    done = minirag("index", str(corpus), "--workdir", str(workdir), "--quiet")
    assert done.returncode == 0, done.stderr
    return workdir, done


# 1. data divergence: a workdir opens only where it was built ---------------------------------------
def test_embedded_workdir_with_a_chroma_url_is_refused_naming_the_flag(indexed):
    workdir, _ = indexed
    before = (workdir / "graph.json").stat().st_mtime_ns
    line = one_line_error(minirag("query", "Who serves crème brûlée?", "--workdir", str(workdir),
                                  "--chroma-url", "http://127.0.0.1:9"))
    assert "without --chroma-url" in line and "chroma_url" not in line
    assert not (workdir / "chroma_server.json").exists() and (workdir / "graph.json").stat().st_mtime_ns == before


def test_falkordb_workdir_without_its_url_is_refused_naming_the_flag(tmp_path):
    workdir = tmp_path / "wd"
    workdir.mkdir()
    (workdir / "manifest.json").write_text("{}", encoding="utf-8")
    (workdir / "graph_server.json").write_text(json.dumps({"graph": "g1"}), encoding="utf-8")
    line = one_line_error(minirag("info", "--workdir", str(workdir)))
    assert "--falkordb-url falkordb://HOST:PORT" in line and "falkordb_url" not in line


@pytest.mark.slow
def test_chroma_server_workdir_queried_without_its_url_is_refused(tmp_path):
    sys.path.insert(0, str(REPO / "tests"))
    from servers import ChromaServer, chroma_executable

    if chroma_executable() is None:
        pytest.skip("no `chroma` command")
    workdir = tmp_path / "wd"
    with ChromaServer(tmp_path / "chroma-server") as server:
        done = minirag("index", str(SAMPLE / "20260105_1100.txt"), "--workdir", str(workdir), "--quiet",
                       "--chroma-url", server.url)
        assert done.returncode == 0, done.stderr
        graph = (workdir / "graph.json").read_bytes()
        line = one_line_error(minirag("query", "Where is lunch?", "--workdir", str(workdir)))
        assert f"--chroma-url {server.url}" in line and "chroma_url" not in line
        assert not (workdir / "chroma").exists() and (workdir / "graph.json").read_bytes() == graph
        with pytest.raises(ValueError, match=r"chroma_url='http://127\.0\.0\.1"):  # Python names the keyword
            MiniRAGIndex(workdir)
        assert minirag("query", "Where is lunch?", "--workdir", str(workdir), "--chroma-url", server.url).returncode == 0


# 2. a wrong server URL is one line: which server, which URL, what to check -----------------------------
@pytest.mark.parametrize("flag, url, server", [("--chroma-url", "http://127.0.0.1:9", "Chroma"),
                                               ("--falkordb-url", "falkordb://127.0.0.1:9", "FalkorDB")])
def test_unreachable_server_is_one_line(tmp_path, flag, url, server):
    workdir = tmp_path / "wd"
    line = one_line_error(minirag("index", str(SAMPLE / "20260105_1100.txt"), "--workdir", str(workdir), "--quiet",
                                  flag, url))
    assert f"cannot reach the {server} server at {url}" in line and "running" in line
    assert not (workdir / "chroma_server.json").exists() and not (workdir / "graph_server.json").exists()


# 5. output that does not mislead ------------------------------------------------------------------------
def test_index_summary_counts_skipped_files_once_and_quiet_is_quiet(indexed):
    _, done = indexed
    assert "rejected" not in done.stdout
    assert re.search(r"8 inserted, 0 updated, 0 unchanged, 1 skipped", done.stdout), done.stdout
    assert "Loading weights" not in done.stderr and "indexing" not in done.stderr, done.stderr


def test_relevance_note_exactly_when_no_graph_evidence_ranked_a_chunk(indexed):
    """Mini says its chunks are ranked by relevance alone exactly when none is labelled ``graph``."""
    workdir, _ = indexed
    index = MiniRAGIndex(workdir)
    for question in ["What did Wolfgang suggest for lunch?", "When did Li Hua arrive in the city?",
                     "Who serves crème brûlée?", "Where did Li Hua and Wolfgang have lunch?"]:
        for k in (2, 3, 5):
            result = index.query(question, top_k=k)
            vias = [c.via for c in result.chunks]
            noted = any("relevance" in n and "ranked by" in n for n in result.notes)
            assert noted == ("graph" not in vias), (question, k, vias, result.notes)
            assert set(vias) <= {"graph", "relevance", "coverage"}


def test_progress_bar_ends_at_its_total(embedder, capsys):
    index = MiniRAGIndex(embedder=embedder, chunk_tokens=48, chunk_overlap=16, show_progress=True)
    text = " ".join(f"Grace Hopper met Alan Turing in room {i} to discuss compilers." for i in range(60))
    report = index.insert([Document("long", text)])
    assert report.chunks > 3  # overlapping windows: their texts add up to more than the document
    frames = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()
    assert "100%" in frames[-1], frames[-3:]
    assert all(int(p) <= 100 for f in frames for p in re.findall(r"(\d+)%", f)), frames


# 6. help ----------------------------------------------------------------------------------------------
def test_help_explains_every_argument_and_defaults():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        for action in sub._actions:
            assert action.help, (name, action.dest)
    query_help = commands["query"].format_help()
    assert "mini" in query_help and "(default)" in query_help
    assert "--graph-backend" in commands["index"].format_help()
    for name in ("query", "answer", "delete", "info", "explain"):
        assert "--graph-backend" not in commands[name].format_help(), name
    assert ".html" in commands["index"].format_help()


def test_version():
    done = minirag("--version")
    assert done.returncode == 0 and re.fullmatch(r"minirag \S+\n", done.stdout), done.stdout


def test_explain_without_out_writes_into_the_workdir_and_says_where(indexed, tmp_path):
    workdir, _ = indexed
    done = minirag("explain", "What did Wolfgang suggest for lunch?", "--workdir", str(workdir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.iterdir()), "explain wrote into the current folder"
    assert f"wrote {(workdir / 'explain.png').resolve()}" in done.stdout


# 7. an empty index says so ------------------------------------------------------------------------------
def test_querying_an_index_where_every_file_was_skipped_says_it_is_empty(tmp_path):
    corpus = tmp_path / "bad"
    corpus.mkdir()
    (corpus / "empty.txt").write_text("", encoding="utf-8")
    (corpus / "paper.pdf").write_bytes(b"%PDF-1.4")
    assert minirag("index", str(corpus), "--workdir", str(tmp_path / "wd"), "--quiet").returncode == 1
    line = one_line_error(minirag("query", "Anything?", "--workdir", str(tmp_path / "wd")))
    assert "is empty" in line and "minirag index" in line


# 9. Latin-1 files are read, and the summary says so -----------------------------------------------------
def test_latin1_file_is_read_and_noted(indexed):
    workdir, done = indexed
    assert re.search(r"cafe\.txt read as cp1252 \(not UTF-8\)", done.stderr), done.stderr
    assert "1 file read from a charset other than UTF-8" in done.stdout
    found = MiniRAGIndex(workdir).query("Who serves crème brûlée?", top_k=1).chunks[0]
    assert found.doc_id.endswith("cafe.txt") and LATIN1 in found.text


# 4. a one-shot query reads nothing it does not need ------------------------------------------------
def test_a_query_does_not_read_the_extraction_cache(indexed):
    workdir, _ = indexed
    assert (workdir / "extractions.jsonl").stat().st_size > 0
    index = MiniRAGIndex(workdir)
    index.query("What did Wolfgang suggest for lunch?")
    assert not index.extraction_cache._loaded and not index.llm_cache._loaded  # 1.9 GB at 100k chunks
    assert len(index.extraction_cache) > 0  # read on first use


def test_graph_backend_mismatch_names_the_flag_on_the_command_line(tmp_path):
    workdir = tmp_path / "wd"
    done = minirag("index", str(SAMPLE / "20260105_1100.txt"), "--workdir", str(workdir), "--quiet",
                   "--graph-backend", "sqlite")
    assert done.returncode == 0, done.stderr
    line = one_line_error(minirag("index", str(SAMPLE / "20260105_1100.txt"), "--workdir", str(workdir),
                                  "--graph-backend", "networkx"))
    assert "without --graph-backend" in line


def test_info_reads_the_manifest_and_graph_without_the_index_module(indexed):
    workdir, _ = indexed
    probe = ("import sys, json\nfrom minirag_core.interfaces.cli import main\n"
             f"assert main(['info', '--workdir', {str(workdir)!r}]) == 0\n"
             "assert 'minirag_core.indexing.index' not in sys.modules and 'bm25s' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", probe], env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema_version"] == SCHEMA_VERSION


# 5. setup.sh: no setuptools notice on every run ------------------------------------------------------
def test_setup_script_editable_install_prints_no_setuptools_notice(tmp_path):
    """setup.sh's editable install, built by setuptools as pip would build it (the wheel only,
    nothing installed), with the environment setup.sh gives it: no 'Editable installation' notice."""
    [line] = [ln for ln in (REPO / "scripts" / "setup.sh").read_text().splitlines() if "install -q -e" in ln]
    warnings = re.match(r'PYTHONWARNINGS="([^"]*)" ', line)
    work = tmp_path / "checkout"
    shutil.copytree(REPO, work, ignore=shutil.ignore_patterns(".git", ".venv", "*.workdir", "__pycache__", "out*"))
    build = "from setuptools import build_meta\nbuild_meta.build_editable('wheels')\n"
    env = {k: v for k, v in ENV.items() if k != "PYTHONWARNINGS"}
    if warnings:
        env["PYTHONWARNINGS"] = warnings.group(1)
    done = subprocess.run([sys.executable, "-c", build], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list((work / "wheels").glob("*.whl")) and "Editable installation" not in done.stderr, done.stderr[-2000:]
