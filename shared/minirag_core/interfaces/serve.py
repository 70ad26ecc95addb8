"""``minirag serve``: open an index once and answer over HTTP (``serve_app.py``) until stopped.
Binds loopback by default; any other address needs an API token. Answers only requests addressed
to a loopback name, the bound address or an ``--allowed-host``."""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import sys

from minirag_core.interfaces.cli_common import CLIError, llm_from_spec, open_index

TOKEN_VARIABLE = "MINIRAG_API_TOKEN"
HOST_NAME = re.compile(r"(\*\.)?[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_pattern(value: str) -> str:
    """An ``--allowed-host`` as the Host header shows it: a name (``*.example.com`` for its
    subdomains), an IP address (IPv6 in brackets) or ``*`` (any); no scheme, port or path."""
    text = value.strip().lower()
    try:
        address = ipaddress.ip_address(text.strip("[]"))
        return f"[{address}]" if address.version == 6 else str(address)
    except ValueError:
        pass
    if text == "*" or HOST_NAME.fullmatch(text):
        return text
    raise CLIError(f"--allowed-host {value!r} is not a host name: give a name or address as clients write it "
                   "in URLs, without scheme, port or path (e.g. --allowed-host minirag.lan)")


def allowed_hosts(args: argparse.Namespace, token: str | None) -> list[str]:
    """The Host header values served beside the loopback names: ``--allowed-host`` and the bound
    address unless it is a wildcard (0.0.0.0, ::)."""
    hosts = [host_pattern(h) for h in args.allowed_host or ()]
    if "*" in hosts and token is None:
        raise CLIError("--allowed-host '*' answers any Host header, so a web page could reach this server through "
                       f"DNS rebinding: set an API token with --token or {TOKEN_VARIABLE}, or list the names")
    try:
        if not ipaddress.ip_address(args.host.strip("[]")).is_unspecified:
            hosts.append(host_pattern(args.host))
    except ValueError:
        hosts.append(host_pattern(args.host))
    return hosts


def cmd_serve(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if not is_loopback(args.host) and token is None:
        raise CLIError(f"--host {args.host} is reachable from other machines: set an API token with --token "
                       f"or {TOKEN_VARIABLE} (or bind 127.0.0.1)")
    hosts = allowed_hosts(args, token)
    try:
        import uvicorn

        from minirag_core.interfaces.serve_app import create_app
    except ImportError as exc:
        raise CLIError(f"minirag serve needs FastAPI and uvicorn ({exc.name} is missing): "
                       "pip install 'minirag-integrations[serve]'") from None
    index = open_index(args, llm=llm_from_spec(args.llm, args.ollama_host))
    app = create_app(index, token=token, allowed_hosts=hosts, max_request_bytes=args.max_request_bytes)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"minirag serve: {index.workdir} on http://{shown}:{args.port} (API pages: /docs, schema: /openapi.json)"
          f"{'; token required' if token else ''}", file=sys.stderr, flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except SystemExit as exc:  # uvicorn exits 1 when it cannot bind
        raise CLIError(f"cannot serve on {args.host}:{args.port} (is the port taken?)") from exc
    return 0
