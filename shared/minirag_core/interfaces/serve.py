"""``minirag serve``: open an index once and answer over HTTP (``serve_app.py``) until stopped.
Binds loopback by default; any other address needs an API token."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys

from minirag_core.interfaces.cli_common import CLIError, llm_from_spec, open_index

TOKEN_VARIABLE = "MINIRAG_API_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if not is_loopback(args.host) and token is None:
        raise CLIError(f"--host {args.host} is reachable from other machines: set an API token with --token "
                       f"or {TOKEN_VARIABLE} (or bind 127.0.0.1)")
    try:
        import uvicorn

        from minirag_core.interfaces.serve_app import BodyLimit, create_app
    except ImportError as exc:
        raise CLIError(f"minirag serve needs FastAPI and uvicorn ({exc.name} is missing): "
                       "pip install 'minirag-integrations[serve]'") from None
    index = open_index(args, llm=llm_from_spec(args.llm, args.ollama_host))
    app = BodyLimit(create_app(index, token=token), args.max_request_bytes)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"minirag serve: {index.workdir} on http://{shown}:{args.port} (API pages: /docs, schema: /openapi.json)"
          f"{'; token required' if token else ''}", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except SystemExit as exc:  # uvicorn exits 1 when it cannot bind
        raise CLIError(f"cannot serve on {args.host}:{args.port} (is the port taken?)") from exc
    return 0
