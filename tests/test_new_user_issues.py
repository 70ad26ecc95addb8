"""Regression tests for what a new user hit: each test failed before its fix. CLI items run the
``minirag`` command line as a subprocess, the way a user types it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.storage.chroma_store import ChromaVectorStore
from minirag_core.types import Document, ExtractedEntity, ExtractionResult

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "examples" / "lihuaworld_sample"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}


def minirag(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minirag_core.interfaces.cli", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


# 1. a speaker-shaped line of one letter never aborts a run -------------------------------------
def test_one_letter_speaker_lines_index_and_query(tmp_path):
    corpus = tmp_path / "kw"
    corpus.mkdir()
    (corpus / "t.txt").write_text("Q: What is it?\nA: It is a test.\n", encoding="utf-8")
    (corpus / "changelog").write_text("W: bzip2-doc: description-synopsis-starts-with-article\n"
                                      "E: foo: no-copyright-file\nN: Debian changelog note.\n", encoding="utf-8")
    # a file without an extension is read when named (a folder walk skips it, with the reason)
    done = minirag("index", str(corpus), str(corpus / "changelog"), "--workdir", str(tmp_path / "kw.workdir"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "2 inserted" in done.stdout
    done = minirag("query", "What is it?", "--workdir", str(tmp_path / "kw.workdir"))
    assert done.returncode == 0 and "kw/t.txt" in done.stdout


class _FailsOnOneChunk:
    """An extractor that crashes on any chunk mentioning "poison" (a stand-in for a buggy rule)."""

    name = "fails-on-poison"

    def extract(self, chunks, *, show_progress=False):
        if any("poison" in c.text for c in chunks):
            raise KeyError("A")
        return [ExtractionResult(entities=[ExtractedEntity(c.text.split()[0], "CONCEPT", c.text)]) for c in chunks]

    async def aextract(self, chunks, *, show_progress=False):
        return self.extract(chunks)


def test_a_failing_chunk_costs_only_itself(embedder):
    index = MiniRAGIndex(None, embedder=embedder, extractor=_FailsOnOneChunk(),
                         vector_store=ChromaVectorStore(None))
    report = index.insert([("a", "Alpha is the first letter.", {}), ("b", "poison breaks the extractor.", {}),
                           ("c", "Gamma is the third letter.", {})])
    assert sorted(report.inserted) == ["a", "b", "c"]
    assert list(report.failed_chunks.values()) == ["b"]
    assert "extraction failed" in str(report)
    assert index.graph_store.entity("ALPHA") is not None and index.graph_store.entity("GAMMA") is not None
    assert {c.doc_id for c in index.query("poison", mode="naive", top_k=3).chunks} == {"a", "b", "c"}


# 2. two writers never lose each other's documents --------------------------------------------
def test_two_writers_on_one_workdir_keep_both(tmp_path, embedder):
    first = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    second = MiniRAGIndex(tmp_path / "wd", embedder=embedder)  # opened before the first writes
    first.insert([("one", "Ada Lovelace wrote the first program.", {})])
    second.insert([("two", "Alan Turing described a universal machine.", {})])
    assert MiniRAGIndex(tmp_path / "wd", embedder=embedder).document_ids() == ["one", "two"]


def test_a_second_writer_gets_a_clear_message(tmp_path):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Grace Hopper built the first compiler.", encoding="utf-8")
    workdir = tmp_path / "wd"
    assert minirag("index", str(corpus), "--workdir", str(workdir), "--quiet").returncode == 0
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from filelock import FileLock
        with FileLock({str(workdir / '.write.lock')!r}):
            print('held', flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        (corpus / "b.txt").write_text("Edsger Dijkstra wrote about shortest paths.", encoding="utf-8")
        busy = minirag("index", str(corpus), "--workdir", str(workdir), "--quiet", "--lock-timeout", "1")
        assert busy.returncode == 2 and "another process is writing" in one_line_error(busy)
        reader = minirag("query", "Who built the first compiler?", "--workdir", str(workdir))
        assert reader.returncode == 0 and "a.txt" in reader.stdout  # readers keep working
    finally:
        holder.kill()
        holder.wait()


# 3. the same file name in two folders --------------------------------------------------------
def test_same_file_name_in_two_folders_gets_two_ids(tmp_path):
    for folder, text in [("d1", "Linus Torvalds wrote Linux."), ("d2", "Guido van Rossum wrote Python.")]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "README.txt").write_text(text, encoding="utf-8")
    workdir = tmp_path / "wd"
    done = minirag("index", "d1", "d2", "--workdir", str(workdir), "--quiet", cwd=tmp_path)
    assert done.returncode == 0 and "2 inserted" in done.stdout, done.stderr
    again = minirag("index", "d2", "--workdir", str(workdir), "--quiet", cwd=tmp_path)
    assert "1 unchanged" in again.stdout and "updated" in again.stdout and "0 updated" in again.stdout
    info = json.loads(minirag("info", "--workdir", str(workdir)).stdout)
    assert info["documents"] == 2


# 4. a large document streams in batches and an interrupted run keeps its work ---------------
def test_large_document_streams_and_resumes(tmp_path, embedder, monkeypatch):
    import minirag_core.indexing.chunking as chunking
    import minirag_core.indexing.index as index_module

    monkeypatch.setattr(chunking, "SEGMENT_CHARS", 3_000)
    monkeypatch.setattr(index_module, "INSERT_BATCH_CHUNKS", 4)
    text = "\n".join(f"Line {i}: Station {i % 50} reported {i * 7 % 13} trains on time." for i in range(1200))
    calls = []

    class Interrupting(_FailsOnOneChunk):
        name = "interrupting"

        def extract(self, chunks, *, show_progress=False):
            calls.append(len(chunks))
            if len(calls) == 3:
                raise KeyboardInterrupt
            return super().extract(chunks)

    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=Interrupting(), chunk_tokens=64,
                         chunk_overlap=8)
    with pytest.raises(KeyboardInterrupt):
        index.insert([("big", text, {})])
    kept = index.graph_store.graph.graph["documents"]["big"]
    assert kept["hash"] == "" and len(kept["chunks"]) == 8  # two batches saved, marked unfinished
    report = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=Interrupting(), chunk_tokens=64,
                          chunk_overlap=8).insert([("big", text, {})])
    assert report.updated == ["big"] and report.chunks > 8
    fresh = MiniRAGIndex(None, embedder=embedder, extractor=_FailsOnOneChunk(), chunk_tokens=64, chunk_overlap=8,
                         vector_store=ChromaVectorStore(None))
    fresh.insert([("big", text, {})])
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=_FailsOnOneChunk(), chunk_tokens=64,
                            chunk_overlap=8)
    assert reopened.graph_store.chunk_ids() == fresh.graph_store.chunk_ids()
    assert max(calls) <= 4  # never more than one batch of chunks in flight


# 5. exit status and skipped files --------------------------------------------------------------
def test_skipped_files_are_listed_and_the_run_succeeds(tmp_path):
    corpus = tmp_path / "mixed"
    corpus.mkdir()
    (corpus / "good.txt").write_text("Marie Curie won two Nobel prizes.", encoding="utf-8")
    (corpus / "page.html").write_text("<html><head><script>x()</script></head><body><p>Rosalind Franklin "
                                      "imaged DNA.</p></body></html>", encoding="utf-8")
    (corpus / "empty.txt").write_text("", encoding="utf-8")
    (corpus / "latin1.txt").write_bytes("Caf\xe9 r\xe9sum\xe9".encode("latin-1"))
    (corpus / "paper.pdf").write_bytes(b"%PDF-1.4 binary")
    (corpus / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    done = minirag("index", str(corpus), "--workdir", str(tmp_path / "wd"), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "3 inserted" in done.stdout  # the Latin-1 file is read (issue 38)
    for name, reason in [("empty.txt", "empty"), ("paper.pdf", "PDF"), ("blob.txt", "binary")]:
        assert any(name in line and reason in line for line in done.stderr.splitlines()), (name, done.stderr)
    assert "3 skipped (listed above)" in done.stdout
    only_bad = tmp_path / "bad"
    only_bad.mkdir()
    (only_bad / "empty.txt").write_text("  \n", encoding="utf-8")
    assert minirag("index", str(only_bad), "--workdir", str(tmp_path / "wd2"), "--quiet").returncode == 1


# 6. one-line errors ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_workdir(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("sample") / "wd"
    done = minirag("index", str(SAMPLE), "--workdir", str(workdir), "--quiet")
    assert done.returncode == 0, done.stderr
    return workdir


@pytest.mark.parametrize("args, message", [
    (["query", "  "], "question is empty"),
    (["explain", "Where is lunch?", "--out", "g.svg"], "choose a .png or .html"),
    (["query", "Where is lunch?", "--k", "0"], "at least 1"),
    (["query", "Where is lunch?", "--k", "-3"], "at least 1"),
])
def test_bad_arguments_are_one_line_errors(sample_workdir, args, message, tmp_path):
    done = minirag(*args, "--workdir", str(sample_workdir), cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_workdir_that_is_a_file_is_a_one_line_error(tmp_path):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    for args in (["query", "q"], ["index", str(SAMPLE)], ["info"]):
        done = minirag(*args, "--workdir", str(tmp_path / "afile"))
        assert done.returncode == 2 and "is a file" in one_line_error(done)


# 7. start-up: info loads no model, a query no torch -----------------------------------------------
def test_info_and_query_do_not_import_torch(sample_workdir):
    probe = textwrap.dedent(f"""
        import sys
        from minirag_core.interfaces.cli import main
        assert main(["info", "--workdir", {str(sample_workdir)!r}]) == 0
        assert "torch" not in sys.modules and "chromadb" not in sys.modules, "info loaded a model or the store"
        assert main(["query", "What did Wolfgang suggest for lunch?", "--workdir", {str(sample_workdir)!r}]) == 0
        assert "torch" not in sys.modules, "a query on an existing index imported torch"
        """)
    done = subprocess.run([sys.executable, "-c", probe], env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("runtime", ["onnxruntime", "numpy"])
def test_small_batch_encoder_agrees_with_sentence_transformers(embedder, runtime):
    from minirag_core.embedding.bert_encoder import BertEncoder

    texts = ["Where did Ada Lovelace work?", "a", "The Free Software Foundation is based in Boston, "
             "Massachusetts, and was founded by Richard Stallman in 1985."]
    encoder = BertEncoder(embedder.model_path, embedder.max_tokens, runtime)
    assert encoder.forward.runtime == runtime
    fast = encoder.encode(texts)
    reference = embedder._model.encode(texts, normalize_embeddings=True)
    assert (fast * reference).sum(axis=1).min() > 0.99999


def test_numpy_gelu_matches_the_exact_erf_form():
    import numpy as np
    from scipy.special import erf

    from minirag_core.embedding.numpy_bert import gelu

    x = np.linspace(-12, 12, 100_001, dtype=np.float32)
    exact = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2)))
    assert gelu(x).dtype == np.float32
    assert np.abs(gelu(x) - exact).max() < 1e-6


@pytest.mark.parametrize("runtime", ["onnxruntime", "numpy"])
def test_small_batch_encoder_packs_a_short_batch_into_one_pass_with_the_same_vectors(embedder, monkeypatch, runtime):
    import numpy as np

    from minirag_core.embedding.bert_encoder import BertEncoder

    encoder = BertEncoder(embedder.model_path, embedder.max_tokens, runtime)
    texts = ["Who founded the society that Ada Lovelace joined in London?", "Ada Lovelace", "a", "Royal Society"]
    alone = np.concatenate([encoder._encode_padded([t]) for t in texts])
    passes: list[int] = []
    forward = encoder.forward
    monkeypatch.setattr(encoder, "forward", lambda ids, *a: passes.append(ids.shape[0]) or forward(ids, *a))
    packed = encoder.encode(texts)
    assert passes == [1], "a question and its names: one packed pass"
    assert (packed * alone).sum(axis=1).min() > 0.99999  # each text's vector as if encoded alone
    passes.clear()
    long_texts = ["word " * 200, "another text " * 60, "Ada"]
    batched = encoder.encode(long_texts)  # past _PACKED_TOKENS: padded batches of similar length
    assert len(passes) > 1
    alone = np.concatenate([encoder._encode_padded([t]) for t in long_texts])
    assert (batched * alone).sum(axis=1).min() > 0.99999


# 9. explain: offline HTML, no floating nodes ------------------------------------------------------
def test_explain_html_loads_nothing_from_the_network(sample_workdir, tmp_path):
    out = tmp_path / "g.html"
    assert minirag("explain", "What did Wolfgang suggest for lunch?", "--workdir", str(sample_workdir),
                   "--out", str(out)).returncode == 0
    html = out.read_text(encoding="utf-8")
    import re

    assert not re.search(r"""(?:src|href)\s*=\s*["']https?://""", html, re.IGNORECASE)
    assert "vis.Network" in html or "new vis" in html  # the graph's own script is inlined


def test_explain_subgraph_has_no_unconnected_entities(embedder):
    from minirag_core.interfaces.visualize import reasoning_subgraph

    index = MiniRAGIndex(None, embedder=embedder, vector_store=ChromaVectorStore(None))
    index.insert([Document("news", "The city council of Springfield approved a new bridge on Monday. "
                                   "Mayor Ana Ruiz said the bridge will open in 2027."),
                  Document("manual", "To install the tool, run the installer. The installer checks Python.")])
    result = index.query("What did Mayor Ana Ruiz say about the bridge?", top_k=2)
    sub = reasoning_subgraph(result, index.graph_store)
    assert all(sub.degree(n) > 0 for n in sub if not n.startswith("chunk:"))
    assert all(len(sub.nodes[n]["label"]) <= 28 for n in sub)


# 10. packaging metadata that setuptools accepts without warnings ----------------------------------
def test_license_is_an_spdx_string():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    assert any(r.startswith("setuptools>=77") for r in project["build-system"]["requires"])


def test_small_batch_encoder_falls_back_to_numpy_when_onnx_runtime_cannot_load(embedder, monkeypatch, caplog):
    from minirag_core.embedding import bert_encoder, onnx_bert

    def broken(self, weights, threads=1):
        raise RuntimeError("opset 20 not supported")

    monkeypatch.setattr(onnx_bert.OnnxBertForward, "__init__", broken)
    monkeypatch.delenv("MINIRAG_BERT_RUNTIME", raising=False)
    with caplog.at_level("WARNING", logger="minirag_core"):
        encoder = bert_encoder.BertEncoder(embedder.model_path, embedder.max_tokens)
    assert encoder.forward.runtime == "numpy" and "NumPy pass" in caplog.text
    assert encoder.encode(["Ada Lovelace"]).shape == (1, 384)
    with pytest.raises(RuntimeError, match="opset 20"):  # asked for by name: the error, not a fallback
        bert_encoder.BertEncoder(embedder.model_path, embedder.max_tokens, "onnxruntime")
