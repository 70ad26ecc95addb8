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


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def _llm_from_spec(spec: str | None, host: str | None):
    if not spec:
        return None
    provider, _, model = spec.partition(":")
    if provider != "ollama" or not model:
        raise CLIError(f"--llm must look like ollama:MODEL (got {spec!r})")
    from minirag_core.llm.ollama_backend import OllamaBackend

    return OllamaBackend(model, host) if host else OllamaBackend(model)


def _workdir(args: argparse.Namespace) -> Path:
    workdir = Path(args.workdir)
    if workdir.exists() and not workdir.is_dir():
        raise CLIError(f"--workdir {workdir} is a file, not an index folder; choose another path")
    return workdir


def _open_index(args: argparse.Namespace, *, llm=None):
    from minirag_core.indexing.index import IndexSettingsMismatch, MiniRAGIndex
    from minirag_core.storage.graph_stores import GraphStoreMismatch
    from minirag_core.indexing.workdir_lock import WorkdirBusy

    workdir = _workdir(args)
    if args.command != "index" and not (workdir / "manifest.json").exists():
        raise CLIError(f"no index at {workdir}; run `minirag index PATH --workdir {workdir}` first")
    try:
        return MiniRAGIndex(workdir, llm=llm, chroma_url=getattr(args, "chroma_url", None),
                            falkordb_url=getattr(args, "falkordb_url", None),
                            graph_backend=getattr(args, "graph_backend", None),
                            show_progress=not getattr(args, "quiet", False),
                            lock_timeout=getattr(args, "lock_timeout", None), workers=getattr(args, "workers", 1),
                            worker_backend=getattr(args, "worker_backend", "process"))
    except (IndexSettingsMismatch, WorkdirBusy, GraphStoreMismatch) as exc:
        raise CLIError(str(exc)) from exc


def _default_root(paths: Sequence[str]) -> Path:
    """The folder that holds every given path: ids then name each file by where it lies,
    folder name included (``index d1 d2`` gives ``d1/README`` and ``d2/README``)."""
    import os

    parents = [str(Path(p).resolve().parent) for p in paths]
    return Path(os.path.commonpath(parents))


def _document_id(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        raise CLIError(f"{path} is outside --root {root}; pass a --root that contains every path") from None


def cmd_index(args: argparse.Namespace) -> int:
    from minirag_core.indexing.file_reading import collect_files, read_document
    from minirag_core.types import Document
    from minirag_core.indexing.workdir_lock import WorkdirBusy

    root = Path(args.root).resolve() if args.root else _default_root(args.paths)
    try:
        files = collect_files(args.paths)
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from exc
    index = _open_index(args, llm=_llm_from_spec(args.llm, args.ollama_host))
    known_sources = {d: m.get("source") for d, m in index.doc_metadata().items()}
    documents: list[Document] = []
    skipped: dict[str, str] = {}
    for path, reason in files.skipped.items():
        skipped[str(path)] = reason
    for path in files.readable:
        doc_id = _document_id(path, root)
        source = str(path.resolve())
        if known_sources.get(doc_id) not in (None, source):
            skipped[str(path)] = (f"its id {doc_id!r} already names {known_sources[doc_id]} in this index "
                                  "(indexed from another --root); pass the same --root as before")
            continue
        text, reason = read_document(path)
        if text is None:
            skipped[str(path)] = reason
            continue
        documents.append(Document(id=doc_id, text=text, metadata={"source": source}))
    start = time.perf_counter()
    try:
        report = index.insert(documents)
    except WorkdirBusy as exc:
        raise CLIError(str(exc)) from exc
    stats = index.stats()
    for path, reason in skipped.items():
        print(f"skipped {path}: {reason}", file=sys.stderr)
    print(report)
    print(f"index: {stats['documents']} documents, {stats['chunks']} chunks, {stats['entities']} entities, "
          f"{stats['relations']} entity-entity edges, {stats['mentions']} entity-chunk edges "
          f"({time.perf_counter() - start:.1f} s)")
    if skipped or report.rejected:
        print(f"summary: {len(report.inserted) + len(report.updated)} indexed, {len(report.unchanged)} unchanged, "
              f"{len(skipped) + len(report.rejected)} skipped (listed above)", file=sys.stderr)
    usable = report.inserted or report.updated or report.unchanged
    return 0 if usable else 1


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


def _check_question(args: argparse.Namespace) -> None:
    if not args.question.strip():
        raise CLIError("the question is empty")


def cmd_query(args: argparse.Namespace) -> int:
    _check_question(args)
    index = _open_index(args)
    _print_result(index.query(args.question, mode=args.mode, top_k=args.k), args.json)
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    llm = _llm_from_spec(args.llm, args.ollama_host)
    if llm is None:
        raise CLIError("answer needs a model: --llm ollama:MODEL (e.g. ollama:qwen2.5:3b)")
    _check_question(args)
    from minirag_core.llm.base import LLMError

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
    """Read the manifest and the graph only: no embedding model, no vector store."""
    from minirag_core.indexing.index import SCHEMA_VERSION
    from minirag_core.storage.base import read_json
    from minirag_core.storage.graph_stores import GraphStoreMismatch, open_graph_store

    workdir = _workdir(args)
    manifest = read_json(workdir / "manifest.json", None)
    if manifest is None:
        raise CLIError(f"no index at {workdir}; run `minirag index PATH --workdir {workdir}` first")
    try:
        graph = open_graph_store(workdir, getattr(args, "falkordb_url", None), getattr(args, "graph_backend", None))
    except GraphStoreMismatch as exc:
        raise CLIError(str(exc)) from exc
    from minirag_core.retrieval.settings import RetrievalSettings

    info = {"workdir": str(workdir.resolve()), "schema_version": SCHEMA_VERSION, **manifest,
            "documents": len(graph.documents()), **graph.stats(),
            "bytes_on_disk": sum(f.stat().st_size for f in workdir.rglob("*") if f.is_file()),
            "retrieval_settings": RetrievalSettings().to_dict()}
    print(json.dumps(info, indent=2))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from minirag_core.interfaces.visualize import SUFFIXES, draw_reasoning_subgraph

    _check_question(args)
    if Path(args.out).suffix.lower() not in SUFFIXES:
        raise CLIError(f"--out {args.out}: choose a .png or .html file")
    index = _open_index(args)
    result = index.query(args.question, mode="mini", top_k=args.k)
    out = draw_reasoning_subgraph(result, index.graph_store, Path(args.out))
    print(f"wrote {out}")
    _print_result(result, False)
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minirag", description="MiniRAG: graph RAG for small language models.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the core does")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"index folder (default {DEFAULT_WORKDIR})")
        p.add_argument("--chroma-url", help="use a Chroma server (e.g. http://127.0.0.1:8000) instead of embedded")
        p.add_argument("--falkordb-url", help="keep the graph on a FalkorDB server (falkordb://HOST:PORT[/GRAPH]) "
                                              "instead of graph.json")
        p.add_argument("--graph-backend", choices=("networkx", "sqlite"), default=None,
                       help="embedded graph store of a new workdir: networkx (in memory, default) or sqlite "
                            "(a file; for graphs larger than memory); a workdir reopens with its own")
        p.add_argument("--lock-timeout", type=float, default=None,
                       help="seconds to wait while another process writes to the workdir (default: wait)")

    def model(p: argparse.ArgumentParser) -> None:
        p.add_argument("--llm", help="model for extraction/query mapping/answers, e.g. ollama:qwen2.5:3b "
                                     "(default: none, the embedded offline pipeline)")
        p.add_argument("--ollama-host", help="Ollama server URL (default http://localhost:11434)")

    def retrieval(p: argparse.ArgumentParser) -> None:
        p.add_argument("question")
        p.add_argument("--mode", choices=["mini", "light", "naive"], default="mini")
        p.add_argument("--k", type=_positive_int, default=5, help="chunks to retrieve (default 5)")
        p.add_argument("--json", action="store_true", help="print the full result as JSON")

    p = sub.add_parser("index", help="index folders of text files (.txt, .md, .html, ...) or single files")
    p.add_argument("paths", nargs="+")
    p.add_argument("--root", help="document ids are file paths relative to this folder "
                                         "(default: the folder holding every PATH, so ids keep the folder name)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--workers", type=_positive_int, default=1,
                   help="processes that extract and embed while this one writes (default 1)")
    p.add_argument("--worker-backend", choices=("process", "ray"), default="process",
                   help="ray: batches as tasks on the Ray cluster at $RAY_ADDRESS (pip install '.[ray]')")
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
    p.add_argument("--k", type=_positive_int, default=5)
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
