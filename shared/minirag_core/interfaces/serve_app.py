"""The HTTP API of ``minirag serve`` (FastAPI): query, insert, delete and info over one open index,
JSON in and out, an OpenAPI schema at ``/openapi.json`` (pages at ``/docs``). Errors are JSON
``{"error": "one line"}``; the Host header, the token and the body's size are checked before a route
runs (``serve_guards.py``); a failure answers with an id the log explains."""

from __future__ import annotations

import logging
import uuid
from typing import Any, Awaitable, Callable, Literal, Sequence

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from minirag_core.interfaces.serve_guards import BodyLimit, HostCheck, TokenCheck, json_error
from minirag_core.retrieval.filters import FilterError, as_filter

logger = logging.getLogger("minirag_core.serve")
DEFAULT_MAX_REQUEST_BYTES = 10 << 20


class QueryRequest(BaseModel):
    question: str = Field(min_length=1, description="the question")
    mode: Literal["mini", "light", "naive"] = Field("mini", description="retrieval mode")
    k: int = Field(5, ge=1, le=200, description="chunks to retrieve")
    max_tokens: int | None = Field(None, ge=1, description="token budget of the chunks' text (default: the "
                                   "index's, 6000 unless changed); when fewer than k fit, the notes say so")
    filter: dict[str, Any] | None = Field(None, description="only documents whose metadata pass, e.g. "
                                          '{"year": {"$gte": 2020}} or {"$or": [{"lang": "en"}, {"lang": "de"}]}')


class DocumentIn(BaseModel):
    id: str = Field(min_length=1, description="document id (re-sending an id replaces that document)")
    text: str = Field(description="the document's text")
    metadata: dict[str, Any] = Field(default_factory=dict, description="kept with the document, returned with its chunks")


class InsertRequest(BaseModel):
    documents: list[DocumentIn] = Field(min_length=1)


class DeleteRequest(BaseModel):
    ids: list[str] = Field(min_length=1, description="document ids to remove")


def create_app(index: Any, *, token: str | None = None, allowed_hosts: Sequence[str] = (),
               max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> FastAPI:
    """The API over an open ``MiniRAGIndex``. It answers requests whose Host header is a loopback
    name or one of ``allowed_hosts``; with ``token`` every path requires ``Authorization: Bearer
    TOKEN``; bodies over ``max_request_bytes`` get 413."""
    app = FastAPI(title="minirag serve", summary="MiniRAG retrieval over one index", version="1")
    # the token is checked by TokenCheck before any route; this only declares it in the schema
    guarded = [Depends(HTTPBearer(auto_error=False))] if token else []

    @app.exception_handler(StarletteHTTPException)  # the routes' and the router's own (404, 405)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return json_error(exc.status_code, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return json_error(422, f"invalid request: {where or 'body'}: {first.get('msg', 'not valid')}")

    @app.middleware("http")
    async def no_tracebacks(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        try:
            return await call_next(request)
        except Exception:  # the traceback goes to the log under an id; the client gets only the id
            incident = uuid.uuid4().hex[:12]
            logger.exception("internal error %s: %s %s failed", incident, request.method, request.url.path)
            return json_error(500, f"internal error {incident}: the server's log tells what failed")

    @app.post("/query", dependencies=guarded, summary="retrieve chunks and reasoning paths for a question")
    def query(request: QueryRequest) -> dict[str, Any]:
        if not request.question.strip():
            raise HTTPException(422, "invalid request: question: the question is empty")
        index.catch_up()  # what `minirag index` or another server wrote meanwhile
        if not index.document_ids():
            raise HTTPException(409, f"the index at {index.workdir} is empty: insert documents first")
        try:
            where = as_filter(request.filter)
        except FilterError as exc:
            raise HTTPException(422, f"invalid request: filter: {exc}") from exc
        return index.query(request.question, mode=request.mode, top_k=request.k,
                           token_budget=request.max_tokens, filter=where).to_dict()

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

    app.add_middleware(BodyLimit, limit=max_request_bytes)  # the last added runs first
    if token:
        app.add_middleware(TokenCheck, token=token)
    app.add_middleware(HostCheck, allowed=allowed_hosts)
    return app


def _write(action: Callable[[], Any]) -> Any:
    """Run a write under the index's workdir lock (taken by ``insert``/``delete``); another
    writer holding it past ``--lock-timeout`` is a 409."""
    from minirag_core.indexing.workdir_lock import WorkdirBusy

    try:
        return action()
    except WorkdirBusy as exc:
        raise HTTPException(409, str(exc)) from exc

