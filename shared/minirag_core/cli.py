"""The ``minirag`` command line: index folders, query, answer, delete, inspect, explain."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Sequence

DEFAULT_WORKDIR = "minirag.workdir"
TEXT_SUFFIXES = {".txt", ".md"}


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def _llm_from_spec(spec: str | None, host: str | None):
    if not spec:
        return None
    provider, _, model = spec.partition(":")
    if provider != "ollama" or not model:
        raise CLIError(f"--llm must look like ollama:MODEL (got {spec!r})")
    from .llm.ollama_backend import OllamaBackend

    return OllamaBackend(model, host) if host else OllamaBackend(model)


def _open_index(args: argparse.Namespace, *, llm=None):
    from .index import IndexSettingsMismatch, MiniRAGIndex

    workdir = Path(args.workdir)
    if args.command != "index" and not (workdir / "manifest.json").exists():
        raise CLIError(f"no index at {workdir}; run `minirag index PATH --workdir {workdir}` first")
    try:
        return MiniRAGIndex(workdir, llm=llm, chroma_url=getattr(args, "chroma_url", None),
                            show_progress=not getattr(args, "quiet", False))
    except IndexSettingsMismatch as exc:
        raise CLIError(str(exc)) from exc


def _collect_files(paths: Sequence[str]) -> list[tuple[Path, Path]]:
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append((path, path.parent))
        elif path.is_dir():
            found.extend((f, path) for f in sorted(path.rglob("*")) if f.is_file() and f.suffix in TEXT_SUFFIXES)
        else:
            raise CLIError(f"{raw}: no such file or folder")
    if not found:
        raise CLIError("no .txt or .md files found in " + ", ".join(paths))
    return found


def cmd_index(args: argparse.Namespace) -> int:
    from .types import Document

    files = _collect_files(args.paths)
    index = _open_index(args, llm=_llm_from_spec(args.llm, args.ollama_host))
    documents, unreadable = [], 0
    for path, root in files:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            print(f"skipped {path}: not UTF-8 text", file=sys.stderr)
            unreadable += 1
            continue
        doc_id = path.relative_to(root).as_posix()
        documents.append(Document(id=doc_id, text=text, metadata={"source": str(path)}))
    start = time.perf_counter()
    report = index.insert(documents)
    stats = index.stats()
    print(report)
    print(f"index: {stats['documents']} documents, {stats['chunks']} chunks, {stats['entities']} entities, "
          f"{stats['relations']} entity-entity edges, {stats['mentions']} entity-chunk edges "
          f"({time.perf_counter() - start:.1f} s)")
    return 1 if report.rejected or unreadable else 0


def _print_result(result, as_json: bool) -> None:
    if as_json:
        print(result.to_json())
        return
    if result.mapping is not None:
        print(f"query entities: {', '.join(result.mapping.entities) or '-'}; "
              f"answer types: {', '.join(result.mapping.answer_types) or '-'}")
    for note in result.notes:
        print(f"note: {note}")
    for rank, chunk in enumerate(result.chunks, 1):
        preview = " ".join(chunk.text.split())[:160]
        print(f"{rank}. [{chunk.score:.3f} {chunk.via}] {chunk.doc_id}: {preview}")
    if result.paths:
        print("reasoning paths:")
        for path in result.paths[:5]:
            print(f"  {path.score:7.3f}  {' -> '.join(path.nodes)}  (from {path.query_entity!r})")


def cmd_query(args: argparse.Namespace) -> int:
    index = _open_index(args)
    _print_result(index.query(args.question, mode=args.mode, top_k=args.k), args.json)
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    llm = _llm_from_spec(args.llm, args.ollama_host)
    if llm is None:
        raise CLIError("answer needs a model: --llm ollama:MODEL (e.g. ollama:qwen2.5:3b)")
    from .llm.base import LLMError

    index = _open_index(args, llm=llm)
    try:
        reply = index.answer(args.question, mode=args.mode, top_k=args.k)
    except LLMError as exc:
        raise CLIError(str(exc)) from exc
    print(json.dumps({"answer": reply.text, "retrieval": reply.result.to_dict()}) if args.json else reply.text)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    index = _open_index(args)
    removed = index.delete(args.doc_ids)
    missing = sorted(set(args.doc_ids) - set(removed))
    for doc_id in removed:
        print(f"deleted {doc_id}")
    if missing:
        raise CLIError("not in the index: " + ", ".join(missing))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    index = _open_index(args)
    info = {"workdir": str(Path(args.workdir).resolve()), **index._manifest(), **index.stats(),
            "bytes_on_disk": sum(f.stat().st_size for f in Path(args.workdir).rglob("*") if f.is_file()),
            "retrieval_settings": index.settings.to_dict()}
    print(json.dumps(info, indent=2))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .visualize import draw_reasoning_subgraph

    index = _open_index(args)
    result = index.query(args.question, mode="mini", top_k=args.k)
    out = draw_reasoning_subgraph(result, index.graph_store, Path(args.out))
    print(f"wrote {out}")
    _print_result(result, False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minirag", description="MiniRAG: graph RAG for small language models.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the core does")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"index folder (default {DEFAULT_WORKDIR})")
        p.add_argument("--chroma-url", help="use a Chroma server (e.g. http://127.0.0.1:8000) instead of embedded")

    def model(p: argparse.ArgumentParser) -> None:
        p.add_argument("--llm", help="model for extraction/query mapping/answers, e.g. ollama:qwen2.5:3b "
                                     "(default: none, the embedded offline pipeline)")
        p.add_argument("--ollama-host", help="Ollama server URL (default http://localhost:11434)")

    def retrieval(p: argparse.ArgumentParser) -> None:
        p.add_argument("question")
        p.add_argument("--mode", choices=["mini", "light", "naive"], default="mini")
        p.add_argument("--k", type=int, default=5, help="chunks to retrieve (default 5)")
        p.add_argument("--json", action="store_true", help="print the full result as JSON")

    p = sub.add_parser("index", help="index folders of .txt/.md files (or single files)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    common(p), model(p)
    p.set_defaults(func=cmd_index)
    p = sub.add_parser("query", help="retrieve chunks and reasoning paths for a question")
    retrieval(p), common(p)
    p.set_defaults(func=cmd_query)
    p = sub.add_parser("answer", help="answer a question with a model (needs --llm)")
    retrieval(p), common(p), model(p)
    p.set_defaults(func=cmd_answer)
    p = sub.add_parser("delete", help="remove documents by id")
    p.add_argument("doc_ids", nargs="+")
    common(p)
    p.set_defaults(func=cmd_delete)
    p = sub.add_parser("info", help="settings, sizes and schema version of an index")
    common(p)
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("explain", help="draw the query's reasoning subgraph (.png or .html)")
    p.add_argument("question")
    p.add_argument("--out", default="graph.png", help="output file: .png (matplotlib) or .html (pyvis)")
    p.add_argument("--k", type=int, default=5)
    common(p)
    p.set_defaults(func=cmd_explain)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(message)s")
    try:
        return int(args.func(args))
    except CLIError as exc:
        print(f"minirag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("minirag: interrupted; the index keeps every finished batch", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
