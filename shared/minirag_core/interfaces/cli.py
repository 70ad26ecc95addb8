"""The ``minirag`` command line: index folders, query, answer, delete, inspect, export, explain, serve.
This module only parses; each command is imported when it runs, so ``--help`` and a query start fast."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from typing import Sequence

from minirag_core.interfaces.cli_common import DEFAULT_WORKDIR, CLIError

__all__ = ["CLIError", "DEFAULT_WORKDIR", "build_parser", "main"]

MODES = ("mini", "light", "naive")
READ_FORMATS = ".txt, .md, .html and other text files"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("minirag-integrations")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _stores(p: argparse.ArgumentParser, *, creates: bool = False) -> None:
    p.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"index folder (default: {DEFAULT_WORKDIR})")
    p.add_argument("--chroma-url", help="vectors on a Chroma server, e.g. http://127.0.0.1:8000 (default: embedded "
                                        "in the workdir); a workdir built on a server needs the URL every time")
    p.add_argument("--falkordb-url", help="graph on a FalkorDB server, falkordb://HOST:PORT[/GRAPH] (default: "
                                          "embedded); a workdir built on a server needs the URL every time")
    p.add_argument("--namespace", help="the index's name on shared servers: its Chroma collections and FalkorDB "
                                       "graph are minirag-NAMESPACE..., apart from other namespaces' (default: none)")
    if creates:
        p.add_argument("--graph-backend", choices=("networkx", "sqlite"), default=None,
                       help="embedded graph store of a new workdir: networkx (in memory; default) or sqlite "
                            "(a file, for graphs larger than memory); a workdir reopens with its own")
    p.add_argument("--lock-timeout", type=float, default=None,
                   help="seconds to wait while another process writes to the workdir (default: wait)")


def _model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--llm", help="model for extraction, query mapping and answers, e.g. ollama:qwen2.5:3b or "
                                 "llamacpp:PATH/TO/MODEL.gguf (llamacpp-chat:PATH: through its chat template) "
                                 "(default: none, the embedded offline pipeline)")
    p.add_argument("--ollama-host", help="Ollama server URL (default: http://localhost:11434)")


def _size(p: argparse.ArgumentParser) -> None:
    from minirag_core.retrieval.settings import RetrievalSettings

    p.add_argument("--k", type=_positive_int, default=5, help="chunks to retrieve (default: 5)")
    p.add_argument("--max-tokens", type=_positive_int, default=None,
                   help=f"token budget of the retrieved chunks' text (default: {RetrievalSettings.token_budget}); "
                        "when fewer than --k chunks fit, a note says so")


def _retrieval(p: argparse.ArgumentParser) -> None:
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--mode", choices=MODES, default="mini",
                   help="mini: MiniRAG's graph retrieval (default); light: LightRAG-style; naive: dense top-k")
    _size(p)
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help="only documents whose metadata KEY equals VALUE (repeatable: all must hold; a VALUE "
                        "that reads as a number or true/false matches that too)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")


def _command(sub: argparse._SubParsersAction, name: str, target: str, help_text: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
    p.set_defaults(func=target)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minirag", description="MiniRAG: graph RAG for small language models.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the core does")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = "minirag_core.interfaces.cli_commands"

    p = _command(sub, "index", f"{commands}:cmd_index", f"index folders or files ({READ_FORMATS})")
    p.add_argument("paths", nargs="+", metavar="PATH", help=f"a folder (walked; {READ_FORMATS}) or a file")
    p.add_argument("--root", help="document ids are file paths relative to this folder "
                                  "(default: the folder holding every PATH, so ids keep the folder name)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--workers", type=_positive_int, default=None,
                   help="processes that extract and embed while this one writes (default: one per core, "
                        "at most $MINIRAG_MAX_WORKERS; a small insert stays in this process)")
    p.add_argument("--worker-backend", choices=("process", "ray"), default="process",
                   help="where the workers run (default: process); ray: tasks on the Ray cluster at "
                        "$RAY_ADDRESS (needs the ray extra)")
    _stores(p, creates=True), _model(p)
    p = _command(sub, "query", f"{commands}:cmd_query", "retrieve chunks and reasoning paths for a question")
    _retrieval(p), _stores(p)
    p = _command(sub, "answer", f"{commands}:cmd_answer", "answer a question with a model (needs --llm)")
    _retrieval(p), _stores(p), _model(p)
    p = _command(sub, "delete", f"{commands}:cmd_delete", "remove documents by id")
    p.add_argument("doc_ids", nargs="+", metavar="DOC_ID", help="a document id, as `minirag info` counts them "
                                                                "and a query prints them (e.g. folder/file.txt)")
    _stores(p)
    p = _command(sub, "info", f"{commands}:cmd_info", "settings, sizes and schema version of an index (JSON)")
    p.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"index folder (default: {DEFAULT_WORKDIR})")
    p.add_argument("--falkordb-url", help="the FalkorDB server of a workdir built on one")
    p = _command(sub, "export", f"{commands}:cmd_export",
                 "write the graph (chunks, entities, relations, mentions) for Gephi or networkx")
    p.add_argument("--format", choices=("graphml", "json"), default="graphml",
                   help="graphml (Gephi, yEd, networkx.read_graphml; default) or json (networkx node-link)")
    p.add_argument("--out", help="output file (default: WORKDIR/graph-export.FORMAT)")
    _stores(p)
    p = _command(sub, "explain", f"{commands}:cmd_explain", "draw the query's reasoning subgraph (.png or .html)")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--out", help="output file: .png (matplotlib) or .html (pyvis) (default: WORKDIR/explain.png)")
    p.add_argument("--aggregate", action="store_true", help="also climb the entity graph's cluster hierarchy "
                                                              "(LeanRAG): the clusters, summaries and relations reached")
    _size(p)
    _stores(p)
    p = _command(sub, "serve", "minirag_core.interfaces.serve:cmd_serve",
                 "keep an index open behind an HTTP API (query, insert, delete, info; needs the serve extra)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only); "
                                                       "any other needs --token")
    p.add_argument("--port", type=int, default=8765, help="port (default: 8765)")
    p.add_argument("--token", help="API token clients send as `Authorization: Bearer TOKEN` on every path, "
                                   "/docs and /openapi.json included (default: the MINIRAG_API_TOKEN environment "
                                   "variable; required off loopback)")
    p.add_argument("--allowed-host", action="append", metavar="NAME",
                   help="a name clients reach the server by, besides localhost, 127.0.0.1, ::1 and the --host "
                        "address (any port); repeatable; *.example.com takes subdomains; others get 400")
    p.add_argument("--max-request-bytes", type=_positive_int, default=10 << 20,
                   help="largest request body accepted (default: 10 MiB)")
    _stores(p, creates=True), _model(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(message)s")
    module, _, name = args.func.partition(":")
    try:
        return int(getattr(importlib.import_module(module), name)(args))
    except CLIError as exc:
        print(f"minirag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("minirag: interrupted; the index keeps every finished batch", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
