"""Helpers shared by the benchmark scripts: paths, index opening, BM25 baseline, machine info."""

from __future__ import annotations

import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:  # run as ``python benchmarks/x.py`` from anywhere
    sys.path.insert(0, str(REPO_ROOT))

DEFAULT_OUT = BENCH_DIR / "out"
DEFAULT_WORKDIR = DEFAULT_OUT / "lihuaworld.workdir"
TOP_K = 5
TOKEN_BUDGET = 6000
WARMUP_QUERY = "What did Li Hua talk about with his friends last week?"


def dir_bytes(path: str | Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def peak_rss_mb() -> float:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_rss_mb() -> float:
    """Resident set size of this process now (Linux ``/proc``; 0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return 0.0


def make_llm(spec: str | None):
    """``ollama:MODEL`` (optionally ``ollama:MODEL@http://host:port``) -> an OllamaBackend."""
    if not spec:
        return None
    kind, _, rest = spec.partition(":")
    if kind != "ollama" or not rest:
        raise SystemExit(f"--llm {spec!r}: expected ollama:MODEL (e.g. ollama:qwen2.5:3b)")
    from minirag_core.llm.ollama_backend import DEFAULT_HOST, OllamaBackend

    model, _, host = rest.partition("@")
    return OllamaBackend(model, host=host or os.environ.get("OLLAMA_HOST", DEFAULT_HOST))


def safe_rmtree(path: Path) -> None:
    """Remove a workdir, refusing anything that does not look like a MiniRAG index."""
    if not path.exists():
        return
    if not path.is_dir() or (any(path.iterdir()) and not (path / "manifest.json").exists()):
        raise SystemExit(f"refusing to delete {path}: not a MiniRAG workdir (no manifest.json)")
    shutil.rmtree(path)


@dataclass
class BuildInfo:
    reused: bool
    seconds_open: float      # constructing MiniRAGIndex (loads the embedding model, opens Chroma)
    seconds_insert: float    # insert() of the corpus (0-ish when reused)
    inserted: int
    unchanged: int
    chunks_inserted: int
    index_bytes: int

    @property
    def seconds_total(self) -> float:
        return self.seconds_open + self.seconds_insert

    def to_dict(self) -> dict[str, Any]:
        return {"reused": self.reused, "seconds_open": self.seconds_open, "seconds_insert": self.seconds_insert,
                "seconds_total": self.seconds_total, "inserted": self.inserted, "unchanged": self.unchanged,
                "chunks_inserted": self.chunks_inserted, "index_bytes": self.index_bytes}


def open_corpus_index(workdir: Path, docs, *, rebuild: bool = False, show_progress: bool = False, **kwargs):
    """Open (or build) the whole-corpus index in ``workdir`` on the embedded default.

    Reuses an existing workdir: ``insert`` skips unchanged documents, so a workdir that
    already holds the corpus costs only the open. ``rebuild`` starts from an empty workdir."""
    from minirag_core.indexing.index import IndexSettingsMismatch, MiniRAGIndex

    if rebuild:
        safe_rmtree(workdir)
    existed = (workdir / "manifest.json").exists()
    t0 = time.perf_counter()
    try:
        index = MiniRAGIndex(workdir, show_progress=show_progress, **kwargs)
    except IndexSettingsMismatch as exc:
        raise SystemExit(f"{exc}\nRe-run with --rebuild to index the corpus again.") from exc
    t1 = time.perf_counter()
    report = index.insert(docs)
    t2 = time.perf_counter()
    reused = existed and not report.inserted and not report.updated
    info = BuildInfo(reused=reused, seconds_open=t1 - t0, seconds_insert=t2 - t1,
                     inserted=len(report.inserted) + len(report.updated), unchanged=len(report.unchanged),
                     chunks_inserted=report.chunks, index_bytes=dir_bytes(workdir))
    if report.rejected:
        print(f"warning: {len(report.rejected)} documents rejected: {dict(list(report.rejected.items())[:3])}",
              file=sys.stderr)
    return index, info


class BM25Baseline:
    """BM25 (``bm25s``, English stopwords) over the index's own chunks; top-k within the token budget.

    ``temporal=True`` (system ``bm25t``, an ablation) first passes chunk texts and queries
    through the core's ``with_temporal_tokens`` — the date normalisation that mini mode's
    lexical signal uses — so plain BM25 and "BM25 + dates" can be told apart."""

    def __init__(self, chunks: dict[str, dict[str, Any]], doc_metadata: dict[str, dict[str, Any]] | None = None,
                 *, temporal: bool = False):
        import bm25s

        self.name = "bm25t" if temporal else "bm25"
        self._prep = _temporal_prep() if temporal else (lambda text: text)
        self.ids = sorted(chunks)
        self.attrs = chunks
        self.doc_metadata = doc_metadata or {}
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize([self._prep(chunks[i]["text"]) for i in self.ids], stopwords="en",
                                        show_progress=False), show_progress=False)

    @classmethod
    def from_index(cls, index, *, temporal: bool = False) -> "BM25Baseline":
        store = index.graph_store
        return cls(store.chunks(store.chunk_ids()), index.doc_metadata(), temporal=temporal)

    def query(self, question: str, *, top_k: int = TOP_K, token_budget: int = TOKEN_BUDGET):
        import bm25s
        import numpy as np
        from minirag_core.retrieval.topology.chunk_ranking import fit_budget
        from minirag_core.types import RetrievalResult, ScoredChunk

        tokens = bm25s.tokenize([self._prep(question)], stopwords="en", show_progress=False, return_ids=False)[0]
        ranked: list[tuple[str, float]] = []
        if tokens:
            scores = np.asarray(self.model.get_scores(tokens))
            order = np.argsort(-scores, kind="stable")[: top_k * 4 + 20]
            ranked = [(self.ids[i], float(scores[i])) for i in order if scores[i] > 0]
        n_tokens = {c: int(self.attrs[c]["n_tokens"]) for c, _ in ranked}
        chosen = fit_budget(ranked, n_tokens, top_k, token_budget)
        chunks = [ScoredChunk(chunk_id=c, doc_id=self.attrs[c]["doc_id"], text=self.attrs[c]["text"], score=s,
                              n_tokens=n_tokens[c], metadata=dict(self.doc_metadata.get(self.attrs[c]["doc_id"], {})),
                              via="bm25") for c, s in chosen]
        return RetrievalResult(query=question, mode=self.name, chunks=chunks)


def _temporal_prep():
    try:
        from minirag_core.extraction.temporal import with_temporal_tokens
    except ImportError as exc:  # an older core
        raise SystemExit("system bm25t needs minirag_core.extraction.temporal.with_temporal_tokens") from exc
    return with_temporal_tokens


def result_sessions(result) -> list[str]:
    """The session of each retrieved chunk (metadata ``session``, else the document id)."""
    return [c.metadata.get("session", c.doc_id) for c in result.chunks]


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # noqa: BLE001
        return None


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except Exception:  # noqa: BLE001
        return None


def git_uncommitted() -> list[str] | None:
    """Uncommitted changes to the core and the benchmarks (results depend on them)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", "shared/minirag_core", "benchmarks"],
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=5)
        return [line for line in out.stdout.splitlines() if line.strip()]
    except Exception:  # noqa: BLE001
        return None


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(), "machine": platform.machine(), "processor": platform.processor(),
        "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "git_commit": git_commit(), "git_uncommitted": git_uncommitted(),
        "packages": {p: _version(p) for p in ("bm25s", "chromadb", "sentence-transformers", "torch", "networkx",
                                              "numpy", "matplotlib", "ollama")},
    }
    try:
        with open("/proc/meminfo") as fh:
            info["mem_total_kb"] = int(fh.readline().split()[1])
        with open("/proc/cpuinfo") as fh:
            names = [line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")]
            info["cpu_model"] = names[0] if names else None
    except OSError:
        pass
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
    except Exception:  # noqa: BLE001
        pass
    return info


def configure_threads(n: int | None) -> int | None:
    """Pin torch's intra-op threads. On this 2-core machine shared with other processes,
    2 OpenMP threads make a one-query embedding take ~0.9 s (threads wait on descheduled
    peers) against ~35 ms with 1 thread; the benchmarks default to 1. ``0``/None: leave it."""
    if not n:
        return None
    try:
        import torch

        torch.set_num_threads(int(n))
        return torch.get_num_threads()
    except Exception:  # noqa: BLE001
        return None


class SystemCaches:
    """Gives every system its own copy of the embedder's cache of short texts.

    The core's embedder keeps an LRU of short texts (queries, query entities, type
    descriptions). When systems run one after another on the same question, the first would
    pay for embedding the question and the others would get it free. ``snapshot()`` (after
    warm-up) records the shared steady state; ``use(system)`` swaps in that system's own
    cache, which then evolves exactly as if the system ran alone over the questions — while
    the systems still interleave per question, so machine noise hits them alike."""

    def __init__(self, index) -> None:
        self._cache = getattr(getattr(index, "embedder", None), "_cache", None)
        self.available = (self._cache is not None and isinstance(getattr(self._cache, "_data", None), dict)
                          and getattr(self._cache, "_lock", None) is not None)
        self._base = None
        self._per: dict[str, Any] = {}

    def snapshot(self) -> None:
        if self.available:
            with self._cache._lock:
                self._base = self._cache._data.copy()

    def forget(self) -> None:
        """Start every system again from the snapshot (e.g. before another pass over the questions)."""
        self._per = {}

    def use(self, system: str) -> None:
        if not self.available:
            return
        with self._cache._lock:
            if system not in self._per:
                self._per[system] = (self._base if self._base is not None else self._cache._data).copy()
            self._cache._data = self._per[system]
