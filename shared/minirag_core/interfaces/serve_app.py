"""The HTTP API of ``minirag serve`` (FastAPI): query, insert, delete and info over one open index,
JSON in and out, an OpenAPI schema at ``/openapi.json`` (pages at ``/docs``). Errors are JSON
``{"error": "one line"}``; a token, when set, is required on every API route; request bodies are
capped before the app reads them."""

from __future__ import annotations

import logging
import secrets
from typing import Any, Awaitable, Callable, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

logger = logging.getLogger("minirag_core.serve")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class QueryRequest(BaseModel):
    question: str = Field(min_length=1, description="the question")
    mode: Literal["mini", "light", "naive"] = Field("mini", description="retrieval mode")
    k: int = Field(5, ge=1, le=200, description="chunks to retrieve")


class DocumentIn(BaseModel):
    id: str = Field(min_length=1, description="document id (re-sending an id replaces that document)")
    text: str = Field(description="the document's text")
    metadata: dict[str, Any] = Field(default_factory=dict, description="kept with the document, returned with its chunks")


class InsertRequest(BaseModel):
    documents: list[DocumentIn] = Field(min_length=1)


class DeleteRequest(BaseModel):
    ids: list[str] = Field(min_length=1, description="document ids to remove")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


class BodyLimit:
    """ASGI wrapper: a request whose body passes ``limit`` bytes gets 413 before the app sees it
    (by its Content-Length, or counted as it arrives when it has none)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await self._refuse(scope, receive, send)
                return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = _error(413, f"request body larger than {self.limit} bytes (minirag serve --max-request-bytes)")
        await response(scope, receive, send)


def create_app(index: Any, *, token: str | None = None) -> FastAPI:
    """The API over an open ``MiniRAGIndex``; with ``token`` every API route requires
    ``Authorization: Bearer TOKEN``."""
    app = FastAPI(title="minirag serve", summary="MiniRAG retrieval over one index", version="1")
    bearer = HTTPBearer(auto_error=False)

    def authorised(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "missing or wrong API token: send `Authorization: Bearer TOKEN`")

    guarded = [Depends(authorised)]

    @app.exception_handler(StarletteHTTPException)  # the routes' and the router's own (404, 405)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return _error(422, f"invalid request: {where or 'body'}: {first.get('msg', 'not valid')}")

    @app.middleware("http")
    async def no_tracebacks(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        try:
            return await call_next(request)
        except Exception as exc:  # one line in the log and in the answer, never a traceback
            logger.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
            return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    @app.post("/query", dependencies=guarded, summary="retrieve chunks and reasoning paths for a question")
    def query(request: QueryRequest) -> dict[str, Any]:
        if not request.question.strip():
            raise HTTPException(422, "invalid request: question: the question is empty")
        index.catch_up()  # what `minirag index` or another server wrote meanwhile
        if not index.document_ids():
            raise HTTPException(409, f"the index at {index.workdir} is empty: insert documents first")
        return index.query(request.question, mode=request.mode, top_k=request.k).to_dict()

    @app.post("/insert", dependencies=guarded, summary="add or replace documents (unchanged ones are skipped)")
    def insert(request: InsertRequest) -> dict[str, Any]:
        from minirag_core.types import Document

        report = _write(lambda: index.insert([Document(d.id, d.text, d.metadata) for d in request.documents]))
        return {"inserted": report.inserted, "updated": report.updated, "unchanged": report.unchanged,
                "rejected": report.rejected, "chunks": report.chunks, "failed_chunks": report.failed_chunks,
                "retried_chunks": report.retried_chunks}

    @app.post("/delete", dependencies=guarded, summary="remove documents by id")
    def delete(request: DeleteRequest) -> dict[str, Any]:
        removed = _write(lambda: index.delete(request.ids))
        return {"deleted": removed, "missing": sorted(set(request.ids) - set(removed))}

    @app.get("/info", dependencies=guarded, summary="sizes and settings of the index")
    def info() -> dict[str, Any]:
        index.catch_up()
        return {"workdir": str(index.workdir.resolve()) if index.workdir else None, **index.stats(),
                "embedding_model": index.embedder.name}

    return app


def _write(action: Callable[[], Any]) -> Any:
    """Run a write under the index's workdir lock (taken by ``insert``/``delete``); another
    writer holding it past ``--lock-timeout`` is a 409."""
    from minirag_core.indexing.workdir_lock import WorkdirBusy

    try:
        return action()
    except WorkdirBusy as exc:
        raise HTTPException(409, str(exc)) from exc

