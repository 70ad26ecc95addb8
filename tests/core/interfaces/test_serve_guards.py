"""What ``minirag serve`` refuses before a route runs: a Host header that is not this machine's
(DNS rebinding), a missing or wrong token (before the body is read, on every path, the schema and
pages too), and what a failure shows (an id, never the exception's text). The app runs in process
over an index whose query fails, so the HTTP layer is tested on its own."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from minirag_core.interfaces.cli import main
from minirag_core.interfaces.serve_app import create_app

TOKEN = "t0ken-for-tests"
SECRET_PATH = "/home/alice/private/workdir/graph.json"


class FailingQueryIndex:
    """An open index with two documents whose every query fails with an OS error naming a path."""

    workdir = None
    embedder = SimpleNamespace(name="test-embedder")

    def catch_up(self) -> bool:
        return False

    def document_ids(self) -> list[str]:
        return ["a.txt", "b.txt"]

    def stats(self) -> dict[str, int]:
        return {"documents": 2, "chunks": 2}

    def query(self, question: str, **kwargs: Any) -> Any:
        raise PermissionError(f"[Errno 13] Permission denied: '{SECRET_PATH}'")


def client(**options: Any) -> TestClient:
    return TestClient(create_app(FailingQueryIndex(), **options), base_url="http://127.0.0.1:8765")


def error_of(reply: Any, status: int) -> str:
    assert reply.status_code == status, reply.text
    assert set(reply.json()) == {"error"}, reply.text
    return reply.json()["error"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "10.0.0.7:8765"])
def test_a_host_header_naming_another_machine_is_refused(host):
    message = error_of(client().get("/info", headers={"Host": host}), 400)
    assert "--allowed-host" in message and "localhost" in message


@pytest.mark.parametrize("host", ["localhost", "localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LocalHost:1"])
def test_loopback_host_names_are_served_on_any_port(host):
    assert client().get("/info", headers={"Host": host}).json()["documents"] == 2


def test_allowed_host_adds_names_and_keeps_refusing_others():
    app = client(allowed_hosts=["minirag.internal", "*.lab.example"])
    assert app.get("/info", headers={"Host": "minirag.internal:8765"}).status_code == 200
    assert app.get("/info", headers={"Host": "gpu1.lab.example"}).status_code == 200
    assert app.get("/info", headers={"Host": "localhost"}).status_code == 200
    error_of(app.get("/info", headers={"Host": "evil.example"}), 400)


def test_the_token_is_checked_before_the_body_is_parsed():
    app = client(token=TOKEN)
    malformed = {"Content-Type": "application/json"}
    error_of(app.post("/insert", content=b"{not json", headers={**malformed, "Authorization": "Bearer wrong"}), 401)
    error_of(app.post("/insert", content=b"{not json", headers=malformed), 401)
    error_of(app.post("/insert", content=b"{not json", headers={**malformed, "Authorization": f"Bearer {TOKEN}"}), 422)


def test_schema_pages_and_unknown_paths_need_the_token():
    app = client(token=TOKEN)
    for path in ("/openapi.json", "/docs", "/redoc", "/nowhere"):
        reply = app.get(path)
        assert "token" in error_of(reply, 401) and reply.headers["www-authenticate"] == "Bearer", path
    assert "/query" in app.get("/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()["paths"]
    assert app.get("/docs", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_without_a_token_the_schema_is_open():
    assert client().get("/openapi.json").status_code == 200


def test_a_failure_answers_with_an_id_and_logs_the_exception(caplog):
    with caplog.at_level(logging.ERROR, logger="minirag_core.serve"):
        message = error_of(client().post("/query", json={"question": "Who?"}), 500)
    assert SECRET_PATH not in message and "Permission" not in message and "Errno" not in message
    incident = message.split("internal error ")[1].split(":")[0]
    assert len(incident) >= 8
    logged = [r for r in caplog.records if incident in r.getMessage()]
    assert logged and logged[0].exc_info is not None and SECRET_PATH in str(logged[0].exc_info[1])


@pytest.mark.parametrize("value", ["http://evil.example/", "evil.example:8765", "a b", ""])
def test_allowed_host_takes_only_a_host_name(value, tmp_path, capsys):
    assert main(["serve", "--allowed-host", value, "--workdir", str(tmp_path / "wd")]) == 2
    assert "--allowed-host" in capsys.readouterr().err and not (tmp_path / "wd").exists()


def test_any_host_needs_a_token(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MINIRAG_API_TOKEN", raising=False)
    assert main(["serve", "--allowed-host", "*", "--workdir", str(tmp_path / "wd")]) == 2
    assert "--token" in capsys.readouterr().err and not (tmp_path / "wd").exists()
