"""Crash safety: SIGKILL the indexing process at random points; the workdir always reopens,
and finishing the run gives the index a clean build gives.

The indexing processes are forked from one "zygote" that has imported the core and loaded
the embedding model once (no inference before the fork), so each round costs a fork, not a
model load. Every index operation (insert, reopen-and-check, state dump) runs in its own
forked process: the test process never opens a workdir another process is writing.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import lihuaworld_documents

pytestmark = pytest.mark.slow

N_DOCS = 40
MIN_KILLS = 10
SMALL_BATCH = 4            # INSERT_BATCH_CHUNKS in the killed runs: many commits to land between
SEED = 20261102

ZYGOTE = textwrap.dedent(r'''
    import json, os, sys, traceback
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    import numpy as np
    import torch
    torch.set_num_threads(1)  # 2 shared cores: one thread is faster than two fighting
    import networkx as nx
    import minirag_core.indexing.index as index_module
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document
    from minirag_core.search.vectors import CHUNKS, ENTITIES, RELATIONS
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    import chromadb  # imported, no client before the fork

    # loads weights, no inference before fork; float32, since a bfloat16 vector also depends
    # slightly on its batch and the resumed index is compared with a clean one to 1e-5
    EMBEDDER = SentenceTransformerEmbedder(bf16=False)
    DOCS = [Document(**d) for d in json.load(open(sys.argv[1]))]

    def say(*parts):
        sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
        sys.stdout.flush()

    def run_insert(cmd):
        index_module.INSERT_BATCH_CHUNKS = cmd["batch"]
        batch = MiniRAGIndex._insert_batch
        def announce(self, *args, **kwargs):  # tell the test each time a batch is committed
            out = batch(self, *args, **kwargs)
            say("BATCH", os.getpid(), len(self._documents))
            return out
        MiniRAGIndex._insert_batch = announce
        index = MiniRAGIndex(cmd["workdir"], embedder=EMBEDDER)
        say("READY", os.getpid(), len(index.document_ids()))
        index.insert(DOCS)
        say("DONE", os.getpid())

    def run_check(cmd):
        cache = os.path.join(cmd["workdir"], "extractions.jsonl")
        tail = open(cache, "rb").read()[-1:] if os.path.exists(cache) else b""
        torn = tail not in (b"", b"\n")  # killed in the middle of an append
        repairs = []
        original = MiniRAGIndex.repair
        def spy(self):
            fixed = original(self)
            repairs.append(fixed)
            return fixed
        MiniRAGIndex.repair = spy
        index = MiniRAGIndex(cmd["workdir"], embedder=EMBEDDER)  # must not raise
        store, graph = index.vectors.store, index.graph_store
        problems = []
        wanted = index.expected_vector_ids()
        assert wanted[CHUNKS] == set(graph.chunk_ids()) and wanted[ENTITIES] == set(graph.entity_ids())
        for name, ids in wanted.items():
            if store.ids(name) != ids:
                problems.append(f"{name}: chroma and graph disagree after reopen")
        registry = index._documents
        chunks = set(graph.chunk_ids())
        registered = {c for r in registry.values() for c in r["chunks"]}
        if registered != chunks:
            problems.append(f"registry lists {len(registered)} chunks, graph has {len(chunks)}")
        for chunk_id, attrs in graph.chunks(chunks).items():
            if attrs["doc_id"] not in registry:
                problems.append(f"chunk {chunk_id} of unregistered document {attrs['doc_id']}")
        results = {}
        for mode in ("naive", "mini", "light"):
            if registry:
                result = index.query("What did Li Hua and Wolfgang talk about?", mode=mode)
                results[mode] = len(result.chunks)
                if not result.chunks:
                    problems.append(f"{mode}: no chunks from a non-empty index")
        say("CHECK", os.getpid(), json.dumps({"documents": len(registry), "repaired": repairs[0] if repairs else {},
                                 "problems": problems, "results": results, "torn_cache_line": torn}))

    def run_state(cmd):
        index = MiniRAGIndex(cmd["workdir"], embedder=EMBEDDER)
        data = nx.node_link_data(index.graph_store.graph, edges="edges")
        data["nodes"] = sorted(data["nodes"], key=lambda n: n["id"])
        for edge in data["edges"]:
            edge["source"], edge["target"] = sorted((edge["source"], edge["target"]))
        data["edges"] = sorted(data["edges"], key=lambda e: (e["source"], e["target"]))
        vectors = {}
        for name in (CHUNKS, ENTITIES, RELATIONS):
            ids = sorted(index.vectors.store.ids(name))
            found = index.vectors.store.get_embeddings(name, ids) if ids else {}
            vectors[name] = {i: found[i].tolist() for i in ids}
        state = {"graph": data, "documents": index.document_ids(), "vectors": vectors}
        with open(cmd["out"], "w") as fh:
            json.dump(state, fh, sort_keys=True)
        say("STATE", os.getpid(), cmd["out"])

    RUN = {"insert": run_insert, "check": run_check, "state": run_state}
    say("ZYGOTE", os.getpid())
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "reap":
            pid, status = os.waitpid(cmd["pid"], 0)
            say("EXIT", pid, os.waitstatus_to_exitcode(status))
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                RUN[cmd["cmd"]](cmd)
            except BaseException:
                traceback.print_exc()
                say("ERROR", os.getpid())
                code = 1
            sys.stdout.flush()
            os._exit(code)
        say("CHILD", pid)   # not reaped until the test says so: the pid stays ours to kill
''')


class Zygote:
    def __init__(self, tmp: Path, docs_file: Path) -> None:
        script = tmp / "zygote.py"
        script.write_text(ZYGOTE)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, str(script), str(docs_file)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=open(tmp / "zygote.err", "w"),
                                     text=True, env=env, bufsize=1)
        self.err = tmp / "zygote.err"
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.expect("ZYGOTE", timeout=300)

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("EOF")

    def expect(self, prefix: str, timeout: float, pid: int | None = None) -> list[str]:
        """The next line starting with ``prefix`` (for ``pid`` if given), skipping others."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {prefix} line within {timeout}s; stderr:\n{self.err.read_text()[-3000:]}")
            parts = line.split(" ", 2)
            if parts[0] == "EOF":
                raise AssertionError(f"zygote died; stderr:\n{self.err.read_text()[-3000:]}")
            if parts[0] == "ERROR":
                raise AssertionError(f"child failed; stderr:\n{self.err.read_text()[-3000:]}")
            if parts[0] == prefix and (pid is None or int(parts[1]) == pid):
                return parts

    def expect_any(self, prefixes: tuple[str, ...], timeout: float, pid: int) -> list[str]:
        """The next line of ``pid`` starting with one of ``prefixes``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {prefixes} line within {timeout}s")
            parts = line.split(" ", 2)
            if parts[0] in ("EOF", "ERROR"):
                raise AssertionError(f"{parts[0]}; stderr:\n{self.err.read_text()[-3000:]}")
            if parts[0] in prefixes and int(parts[1]) == pid:
                return parts

    def send(self, **cmd) -> None:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def start(self, **cmd) -> int:
        self.send(**cmd)
        return int(self.expect("CHILD", timeout=60)[1])

    def reap(self, pid: int) -> int:
        self.send(cmd="reap", pid=pid)
        return int(self.expect("EXIT", timeout=600, pid=pid)[2])

    def run(self, timeout: float = 600, **cmd) -> list[str]:
        """Run a command to completion; return its result line."""
        pid = self.start(**cmd)
        done = {"insert": "DONE", "check": "CHECK", "state": "STATE"}[cmd["cmd"]]
        parts = self.expect(done, timeout=timeout, pid=pid)
        assert self.reap(pid) == 0
        return parts

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _load_state(path: Path) -> dict:
    return json.loads(path.read_text())


def _assert_same_index(a: dict, b: dict, label: str) -> None:
    assert a["documents"] == b["documents"], label
    assert a["graph"] == b["graph"], label
    for name in a["vectors"]:
        assert a["vectors"][name].keys() == b["vectors"][name].keys(), (label, name)
        for key, vector in a["vectors"][name].items():
            np.testing.assert_allclose(vector, b["vectors"][name][key], atol=1e-5, err_msg=f"{label} {key}")


def test_sigkill_at_random_points_then_reopen_and_finish(tmp_path):
    docs = lihuaworld_documents(weeks=("week1", "week2", "week3", "week4", "week5"))[:N_DOCS]
    assert len(docs) == N_DOCS
    docs_file = tmp_path / "docs.json"
    docs_file.write_text(json.dumps([{"id": d.id, "text": d.text, "metadata": d.metadata} for d in docs]))
    rng = random.Random(SEED)
    started = time.monotonic()
    zygote = Zygote(tmp_path, docs_file)
    try:
        # the reference: an uninterrupted build with the default batch size
        zygote.run(cmd="insert", workdir=str(tmp_path / "clean"), batch=64)
        zygote.run(cmd="state", workdir=str(tmp_path / "clean"), out=str(tmp_path / "clean.json"))
        clean = _load_state(tmp_path / "clean.json")
        assert len(clean["documents"]) == N_DOCS
        clean_seconds = time.monotonic() - started

        kills: list[dict] = []
        workdirs = [tmp_path / "crash0"]
        rounds, batch_seconds = 0, []
        while len(kills) < MIN_KILLS:
            rounds += 1
            assert rounds < 4 * MIN_KILLS, "the runs keep finishing before the kill"
            workdir = workdirs[-1]
            # a random point: after 0-2 committed batches, somewhere inside the next one
            # (extraction, Chroma upserts or the graph write); 0 batches includes the open
            wait_batches = rng.randint(0, 2)
            typical = sorted(batch_seconds)[len(batch_seconds) // 2] if batch_seconds else 2.0
            delay = rng.uniform(0.0, 1.2 * typical)
            pid = zygote.start(cmd="insert", workdir=str(workdir), batch=SMALL_BATCH)
            finished = False
            mark = time.monotonic()
            for _ in range(wait_batches):
                tag = zygote.expect_any(("BATCH", "DONE"), timeout=300, pid=pid)
                batch_seconds.append(time.monotonic() - mark)
                mark = time.monotonic()
                if tag[0] == "DONE":
                    finished = True
                    break
            if not finished:
                time.sleep(delay)
            os.kill(pid, signal.SIGKILL)   # a zombie if it already finished: then a no-op
            code = zygote.reap(pid)
            if code == -signal.SIGKILL:
                check = json.loads(zygote.run(cmd="check", workdir=str(workdir))[2])
                assert check["problems"] == [], check
                kills.append({"after_batches": wait_batches, "delay": round(delay, 2), "workdir": workdir.name,
                              **check})
            else:
                assert code == 0, f"insert failed with exit code {code}"
            if code == 0 or (kills and kills[-1]["documents"] == N_DOCS):
                workdirs.append(tmp_path / f"crash{len(workdirs)}")  # finished: crash a fresh build

        # finish every crashed build and compare it with the clean one
        for workdir in workdirs:
            if not workdir.exists():
                continue
            zygote.run(cmd="insert", workdir=str(workdir), batch=SMALL_BATCH)
            out = tmp_path / f"{workdir.name}.json"
            zygote.run(cmd="state", workdir=str(workdir), out=str(out))
            _assert_same_index(_load_state(out), clean, workdir.name)
    finally:
        zygote.close()

    repaired = sum(1 for k in kills if any(k["repaired"].values()))
    progress = sorted({k["documents"] for k in kills})
    torn = sum(1 for k in kills if k["torn_cache_line"])
    print(f"\ncrash safety: {len(kills)} SIGKILLs in {rounds} rounds over {len(workdirs)} build(s) of "
          f"{N_DOCS} sessions (batches of {SMALL_BATCH} chunks); documents indexed at the kills: {progress}; "
          f"{repaired} reopen(s) repaired Chroma, {torn} found a torn cache line; clean build {clean_seconds:.0f}s, "
          f"total {time.monotonic() - started:.0f}s")
    assert len(kills) >= MIN_KILLS
    assert len(progress) >= 3, "kills should land at different stages of the build"
