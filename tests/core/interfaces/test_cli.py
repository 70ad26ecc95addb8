"""The ``minirag`` command line on a few bundled LiHuaWorld sessions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from minirag_core.indexing.manifest import SCHEMA_VERSION
from minirag_core.interfaces.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "lihuaworld_sample"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    corpus = tmp_path_factory.mktemp("corpus")
    for name in ["20260105_1100.txt", "20260106_2000.txt", "20260108_1100.txt", "20260109_1000.txt"]:
        shutil.copy(SAMPLE / name, corpus / name)
    wd = tmp_path_factory.mktemp("cli") / "index.workdir"
    assert main(["index", str(corpus), "--workdir", str(wd), "--quiet"]) == 0
    return wd


def test_index_summary_and_info(workdir, capsys):
    assert main(["info", "--workdir", str(workdir)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["documents"] == 4 and info["chunks"] >= 4 and info["entities"] > 0
    assert info["schema_version"] == SCHEMA_VERSION and info["embedding_model"].endswith("all-MiniLM-L6-v2")


def test_query_prints_ranked_chunks_and_paths(workdir, capsys):
    assert main(["query", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(workdir), "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n1. [") + out.count("\n2. [") + out.startswith("1. [") >= 1
    assert "20260108_1100.txt" in out
    assert "reasoning paths:" in out and "WOLFGANG SCHULZ" in out


def test_query_json_is_the_full_result(workdir, capsys):
    assert main(["query", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(workdir), "--json",
                 "--mode", "naive", "--k", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["mode"] == "naive" and len(result["chunks"]) == 3


def test_max_tokens_sets_the_budget_and_a_cut_k_is_noted(workdir, capsys):
    """``--k`` larger than the token budget holds: the note names the budget; ``--max-tokens`` raises it."""
    question = ["query", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(workdir), "--k", "50"]
    assert main([*question, "--max-tokens", "150", "--mode", "naive"]) == 0
    out = capsys.readouterr().out
    shown = sum(line[:1].isdigit() for line in out.splitlines())
    assert f"note: token budget: {shown} of the 50 chunks asked for fit in 150 tokens" in out
    assert "--max-tokens" in out
    assert main([*question, "--max-tokens", "100000", "--mode", "naive", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["chunks"]) > shown and not any("token budget" in n for n in result["notes"])


def test_answer_prints_the_budget_note_beside_the_answer(workdir, capsys, monkeypatch):
    """``answer --max-tokens``: the reply alone on stdout, the budget's note on stderr."""

    class FixedReply:
        name = "fixed-reply"

        def complete(self, prompt, *, json_mode=False):
            return "At the cozy café downtown."

        async def acomplete(self, prompt, *, json_mode=False):
            return self.complete(prompt)

    monkeypatch.setattr("minirag_core.interfaces.cli_commands.llm_from_spec", lambda spec, host: FixedReply())
    assert main(["answer", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(workdir), "--mode", "naive",
                 "--llm", "ollama:any", "--k", "50", "--max-tokens", "150"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "At the cozy café downtown."
    assert "note: token budget: " in captured.err and "fit in 150 tokens" in captured.err


def test_explain_writes_png_and_html(workdir, tmp_path, capsys):
    for name in ["graph.png", "graph.html"]:
        out = tmp_path / name
        assert main(["explain", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(workdir),
                     "--out", str(out)]) == 0
        assert out.stat().st_size > 1000
    assert (tmp_path / "graph.png").read_bytes()[:4] == b"\x89PNG"
    assert "<html" in (tmp_path / "graph.html").read_text().lower()


def test_explain_aggregate_shows_the_clusters_reached(workdir, tmp_path, capsys):
    out = tmp_path / "lean.html"
    assert main(["explain", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(workdir),
                 "--out", str(out), "--aggregate"]) == 0
    printed = capsys.readouterr().out
    assert "aggregation: from " in printed and "WOLFGANG SCHULZ" in printed.split("aggregation: from ")[1]
    assert "  level 1 [" in printed
    assert "L1: " in out.read_text()  # the summary nodes drawn


def test_errors_are_one_line_with_exit_code_2(tmp_path, workdir, capsys):
    assert main(["query", "anything", "--workdir", str(tmp_path / "missing")]) == 2
    assert "no index at" in capsys.readouterr().err
    assert main(["answer", "anything", "--workdir", str(workdir)]) == 2
    assert "needs a model" in capsys.readouterr().err
    assert main(["answer", "anything", "--workdir", str(workdir), "--llm", "gpt"]) == 2
    assert main(["delete", "no-such-doc", "--workdir", str(workdir)]) == 2
    assert "not in the index" in capsys.readouterr().err
    assert main(["index", str(tmp_path / "nope"), "--workdir", str(workdir)]) == 2


def test_answer_against_unreachable_ollama_is_a_clear_error(workdir, capsys):
    code = main(["answer", "Where is lunch?", "--workdir", str(workdir), "--llm", "ollama:qwen2.5:3b",
                 "--ollama-host", "http://127.0.0.1:9"])
    assert code == 2
    err = capsys.readouterr().err
    assert "127.0.0.1:9" in err and "qwen2.5:3b" in err


def test_delete_removes_the_document(tmp_path, capsys):
    corpus = tmp_path / "c"
    corpus.mkdir()
    for name in ["20260105_1100.txt", "20260108_1100.txt"]:
        shutil.copy(SAMPLE / name, corpus / name)
    wd = tmp_path / "wd"
    assert main(["index", str(corpus), "--workdir", str(wd), "--quiet"]) == 0
    assert main(["delete", "c/20260108_1100.txt", "--workdir", str(wd)]) == 0  # ids keep the folder name
    capsys.readouterr()
    assert main(["info", "--workdir", str(wd)]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 1


def test_index_workers_reach_the_index(monkeypatch, tmp_path) -> None:
    """``minirag index --workers N`` opens the index with N workers (0 is refused), and without
    it leaves the count to the index."""
    from minirag_core.interfaces import cli

    seen = {}

    class Stop(Exception):
        pass

    def fake_index(workdir, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr("minirag_core.indexing.index.MiniRAGIndex", fake_index)
    (tmp_path / "a.md").write_text("# A\n\nSome text.", encoding="utf-8")
    with pytest.raises(Stop):
        cli.main(["index", str(tmp_path / "a.md"), "--workdir", str(tmp_path / "wd"), "--workers", "3"])
    assert seen["workers"] == 3 and seen["worker_backend"] == "process"
    seen.clear()
    with pytest.raises(Stop):
        cli.main(["index", str(tmp_path / "a.md"), "--workdir", str(tmp_path / "wd")])
    assert seen["workers"] is None  # the index's default: one per core
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["index", "x", "--workers", "0"])
