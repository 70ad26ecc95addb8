"""``minirag serve`` as a client sees it: a server the test starts on loopback, queried over HTTP
with a real client (httpx): the OpenAPI schema, JSON answers and errors, the token, the request
size limit, the Host check, and writes that wait for the workdir lock."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from minirag_core.indexing.workdir_lock import WorkdirLock
from minirag_core.interfaces.cli import build_parser
from servers import free_port

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "examples" / "lihuaworld_sample"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
       "PYTHONPATH": os.pathsep.join([str(REPO / "shared"), str(REPO), os.environ.get("PYTHONPATH", "")])}
TOKEN = "s3cret-test-token"
LIMIT = 20_000


def minirag(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minirag_core.interfaces.cli", *args], env=ENV,
                          capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    corpus = tmp_path_factory.mktemp("corpus")
    for name in ["20260105_1100.txt", "20260108_1100.txt", "20260109_1000.txt"]:
        shutil.copy(SAMPLE / name, corpus / name)
    workdir = tmp_path_factory.mktemp("serve") / "wd"
    done = minirag("index", str(corpus), "--workdir", str(workdir), "--quiet")
    assert done.returncode == 0, done.stderr
    port = free_port()
    log = open(workdir.parent / "serve.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "minirag_core.interfaces.cli", "serve", "--workdir", str(workdir),
                             "--port", str(port), "--token", TOKEN, "--max-request-bytes", str(LIMIT),
                             "--lock-timeout", "1"], env=ENV, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    try:
        while True:
            assert proc.poll() is None, (workdir.parent / "serve.log").read_text()
            assert time.monotonic() < deadline, "minirag serve did not answer in 300 s"
            try:
                httpx.get(f"{url}/info", timeout=2)  # any answer (401 here) means it listens
                break
            except httpx.TransportError:
                time.sleep(0.3)
        with httpx.Client(base_url=url, timeout=120) as client:
            yield client, workdir, f"{corpus.name}/20260109_1000.txt"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def assert_json_error(reply: httpx.Response, status: int) -> str:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error"} and "Traceback" not in body["error"] and "\n" not in body["error"], body
    return body["error"]


@pytest.mark.slow
def test_serve_answers_queries_writes_and_errors_over_http(server):
    client, workdir, other_doc = server
    assert_json_error(client.get("/openapi.json"), 401)
    schema = client.get("/openapi.json", headers=auth()).json()
    assert {"/query", "/insert", "/delete", "/info"} <= set(schema["paths"])
    rebound = client.get("/info", headers={**auth(), "Host": "attacker.example:80"})
    assert "--allowed-host" in assert_json_error(rebound, 400)

    assert "token" in assert_json_error(client.post("/query", json={"question": "Where is lunch?"}), 401)
    wrong = client.post("/query", json={"question": "Where is lunch?"}, headers={"Authorization": "Bearer nope"})
    assert_json_error(wrong, 401)

    reply = client.post("/query", json={"question": "What did Wolfgang suggest for lunch?", "k": 3}, headers=auth())
    assert reply.status_code == 200, reply.text
    chunks = reply.json()["chunks"]
    assert 1 <= len(chunks) <= 3 and all({"doc_id", "score", "via", "text"} <= set(c) for c in chunks)
    assert client.get("/info", headers=auth()).json()["documents"] == 3

    assert "question" in assert_json_error(client.post("/query", json={"question": ""}, headers=auth()), 422)
    assert_json_error(client.get("/nowhere", headers=auth()), 404)
    assert_json_error(client.get("/query", headers=auth()), 405)
    assert_json_error(client.post("/query", json={"question": "x", "mode": "deep"}, headers=auth()), 422)
    assert_json_error(client.post("/query", content=b"{not json", headers={**auth(), "Content-Type":
                                                                           "application/json"}), 422)

    big = {"documents": [{"id": "big.txt", "text": "Ada Lovelace wrote notes. " * 2000}]}
    assert "larger than" in assert_json_error(client.post("/insert", json=big, headers=auth()), 413)

    note = {"documents": [{"id": "note.txt", "text": "Marguerite Okafor repairs violins in the harbour workshop.",
                           "metadata": {"source": "api"}}]}
    reply = client.post("/insert", json=note, headers=auth())
    assert reply.status_code == 200 and reply.json()["inserted"] == ["note.txt"], reply.text
    found = client.post("/query", json={"question": "Who repairs violins?", "k": 2}, headers=auth()).json()
    assert "note.txt" in [c["doc_id"] for c in found["chunks"]]

    with WorkdirLock(workdir):  # another writer holds the workdir: the server's write waits, then refuses
        started = time.monotonic()
        busy = client.post("/delete", json={"ids": ["note.txt"]}, headers=auth())
        assert "another process is writing" in assert_json_error(busy, 409)
        assert time.monotonic() - started >= 0.9
    reply = client.post("/delete", json={"ids": ["note.txt", "absent.txt"]}, headers=auth())
    assert reply.json() == {"deleted": ["note.txt"], "missing": ["absent.txt"]}
    assert client.get("/info", headers=auth()).json()["documents"] == 3

    # another process writes to the workdir: the server reads it before its next answer
    done = minirag("delete", other_doc, "--workdir", str(workdir))
    assert done.returncode == 0, done.stderr
    assert client.get("/info", headers=auth()).json()["documents"] == 2
    found = client.post("/query", json={"question": "What did Wolfgang suggest for lunch?"}, headers=auth()).json()
    assert other_doc not in [c["doc_id"] for c in found["chunks"]]


def test_serve_binds_loopback_by_default_and_needs_a_token_elsewhere(tmp_path):
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1" and args.token is None
    env_without_token = {k: v for k, v in ENV.items() if k != "MINIRAG_API_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "minirag_core.interfaces.cli", "serve", "--host", "0.0.0.0",
                           "--workdir", str(tmp_path / "wd")], env=env_without_token, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "--token" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "wd").exists()


def test_serve_query_takes_a_token_budget() -> None:
    """``max_tokens`` in a query request sets the token budget; a cut k is in the notes."""
    from fastapi.testclient import TestClient
    from stand_ins import HashEmbedder, NameListExtractor, NameMapper

    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.interfaces.serve_app import create_app
    from minirag_core.types import Document

    index = MiniRAGIndex(None, embedder=HashEmbedder(), extractor=NameListExtractor(), query_mapper=NameMapper())
    index.insert([Document(f"d{i}", f"Person{i} met Person{i + 1} at the harbour to talk about boats.")
                  for i in range(6)])
    client = TestClient(create_app(index), base_url="http://127.0.0.1")  # a loopback Host, as the guard wants
    ask = {"question": "Who met Person3 at the harbour?", "mode": "naive", "k": 6}
    cut = client.post("/query", json={**ask, "max_tokens": 25}).json()
    assert len(cut["chunks"]) < 6 and any("fit in 25 tokens" in n for n in cut["notes"])
    full = client.post("/query", json={**ask, "max_tokens": 1000}).json()
    assert len(full["chunks"]) == 6 and not any("token budget" in n for n in full["notes"])
    assert client.post("/query", json={**ask, "max_tokens": 0}).status_code == 422
