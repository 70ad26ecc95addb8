"""The ``minirag`` commands that index, query, answer, delete, inspect, export and explain (one function each)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from minirag_core.interfaces.cli_common import (CLIError, as_cli_error, check_question, llm_from_spec, no_index,
                                                open_index, store_errors, where_filter, workdir_of)


def _default_root(paths: Sequence[str]) -> Path:
    """The folder that holds every given path: ids then name each file by where it lies,
    folder name included (``index d1 d2`` gives ``d1/README`` and ``d2/README``)."""
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

    root = Path(args.root).resolve() if args.root else _default_root(args.paths)
    try:
        files = collect_files(args.paths)
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from exc
    index = open_index(args, llm=llm_from_spec(args.llm, args.ollama_host))
    known_sources = {d: m.get("source") for d, m in index.doc_metadata().items()}
    documents: list[Document] = []
    skipped: dict[str, str] = {str(path): reason for path, reason in files.skipped.items()}
    recoded: dict[str, str] = {}
    for path in files.readable:
        doc_id = _document_id(path, root)
        source = str(path.resolve())
        if known_sources.get(doc_id) not in (None, source):
            skipped[str(path)] = (f"its id {doc_id!r} already names {known_sources[doc_id]} in this index "
                                  "(indexed from another --root); pass the same --root as before")
            continue
        text, note = read_document(path)
        if text is None:
            skipped[str(path)] = note
            continue
        if note:
            recoded[str(path)] = note
        documents.append(Document(id=doc_id, text=text, metadata={"source": source}))
    start = time.perf_counter()
    try:
        report = index.insert(documents)
    except store_errors() as exc:
        raise as_cli_error(exc) from exc
    finally:
        index.close()  # the worker processes
    stats = index.stats()
    for path, reason in skipped.items():
        print(f"skipped {path}: {reason}", file=sys.stderr)
    for key, reason in report.rejected.items():
        print(f"skipped {key}: {reason}", file=sys.stderr)
    for path, note in recoded.items():
        print(f"note: {path} {note}", file=sys.stderr)
    print(_summary(report, len(skipped), len(recoded)))
    print(f"index: {stats['documents']} documents, {stats['chunks']} chunks, {stats['entities']} entities, "
          f"{stats['relations']} entity-entity edges, {stats['mentions']} entity-chunk edges "
          f"({time.perf_counter() - start:.1f} s)")
    usable = report.inserted or report.updated or report.unchanged
    return 0 if usable else 1


def _summary(report: Any, skipped_files: int, recoded: int) -> str:
    """One line for the run: what was indexed, and every file left out, counted once."""
    skipped = skipped_files + len(report.rejected)
    text = (f"{len(report.inserted)} inserted, {len(report.updated)} updated, {len(report.unchanged)} unchanged, "
            f"{skipped} skipped{' (listed above)' if skipped else ''}, {report.chunks} new chunks")
    if recoded:
        text += f"; {recoded} file{'s' * (recoded > 1)} read from a charset other than UTF-8 (noted above)"
    if report.retried_chunks:
        text += f"; {len(report.retried_chunks)} chunks whose extraction had failed extracted now"
    if report.failed_chunks:
        text += (f"; {len(report.failed_chunks)} chunks without entities (extraction failed; see the log; "
                 "the next run tries them again, `minirag info` lists them)")
    usage = report.token_usage
    if usage.get("calls"):
        text += (f"; model tokens: {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion "
                 f"in {usage['calls']} calls")
    return text


#: reasoning paths a plain-text result shows (``--json`` has every one)
SHOWN_PATHS = 5


def print_result(result: Any, as_json: bool) -> None:
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
    paths = result.ranked_paths()
    if paths:
        print(f"reasoning paths: {min(len(paths), SHOWN_PATHS)} of {len(paths)}, strongest first "
              "(score lowered for entities found in many chunks)")
        for path in paths[:SHOWN_PATHS]:
            print(f"  {path.weighted_score:7.3f}  {' -> '.join(path.nodes)}  ({path.origin})")


def cmd_query(args: argparse.Namespace) -> int:
    check_question(args.question)
    where = where_filter(args.where)
    index = open_index(args, require_documents=True)
    print_result(index.query(args.question, mode=args.mode, top_k=args.k, token_budget=args.max_tokens,
                             filter=where), args.json)
    return 0


def cmd_answer(args: argparse.Namespace) -> int:
    llm = llm_from_spec(args.llm, args.ollama_host)
    if llm is None:
        raise CLIError("answer needs a model: --llm ollama:MODEL (e.g. ollama:qwen2.5:3b)")
    check_question(args.question)
    where = where_filter(args.where)
    from minirag_core.llm.base import LLMError
    from minirag_core.retrieval.budget import is_budget_note

    index = open_index(args, llm=llm, require_documents=True)
    try:
        reply = index.answer(args.question, mode=args.mode, top_k=args.k, token_budget=args.max_tokens, filter=where)
    except LLMError as exc:
        raise CLIError(str(exc)) from exc
    for note in filter(is_budget_note, reply.result.notes):  # stdout holds the answer alone
        print(f"note: {note}", file=sys.stderr)
    print(json.dumps({"answer": reply.text, "token_usage": reply.token_usage, "retrieval": reply.result.to_dict()})
          if args.json else reply.text)
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    index = open_index(args)
    try:
        removed = index.delete(args.doc_ids)
    except store_errors() as exc:
        raise as_cli_error(exc) from exc
    missing = sorted(set(args.doc_ids) - set(removed))
    for doc_id in removed:
        print(f"deleted {doc_id}")
    if missing:
        raise CLIError("not in the index: " + ", ".join(missing))
    return 0


def index_info(workdir: Path, falkordb_url: str | None) -> dict[str, Any]:
    """Settings, sizes and schema version, read from the manifest and the graph only (no
    embedding model, no vector store)."""
    from minirag_core.indexing.failed_chunks import FAILED_FILE
    from minirag_core.retrieval.settings import RetrievalSettings
    from minirag_core.storage.base import read_json
    from minirag_core.storage.graph_stores import open_graph_store
    from minirag_core.storage.locations import StoreMismatch, StoreUnreachable

    manifest = read_json(workdir / "manifest.json", None)
    if manifest is None:
        raise no_index(workdir)
    try:
        graph = open_graph_store(workdir, falkordb_url)
    except (StoreMismatch, StoreUnreachable) as exc:  # not the index module: info starts in a third less
        raise as_cli_error(exc) from exc
    failed = read_json(workdir / FAILED_FILE, {})  # chunks without entities until a write extracts them
    from minirag_core.indexing.build_usage import read_build_usage

    return {"workdir": str(workdir.resolve()), **manifest,  # the manifest holds the schema version
            "documents": len(graph.documents()), **graph.stats(),
            "failed_chunks": {c: r.get("doc_id", "") for c, r in failed.items()} if isinstance(failed, dict) else {},
            "bytes_on_disk": sum(f.stat().st_size for f in workdir.rglob("*") if f.is_file()),
            "model_token_usage": read_build_usage(workdir).to_dict(),  # all the writes' extraction calls
            "retrieval_settings": RetrievalSettings().to_dict()}


def cmd_info(args: argparse.Namespace) -> int:
    print(json.dumps(index_info(workdir_of(args), args.falkordb_url), indent=2))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else workdir_of(args) / f"graph-export.{args.format}"
    index = open_index(args)
    written = index.export_graph(out, format=args.format)
    stats = index.stats()
    print(f"wrote {written.resolve()}: {stats['chunks']} chunks, {stats['entities']} entities, "
          f"{stats['relations']} entity-entity edges, {stats['mentions']} entity-chunk edges")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from minirag_core.interfaces.visualize import SUFFIXES, draw_reasoning_subgraph

    check_question(args.question)
    out = Path(args.out) if args.out else workdir_of(args) / "explain.png"
    if out.suffix.lower() not in SUFFIXES:
        raise CLIError(f"--out {args.out}: choose a .png or .html file")
    index = open_index(args, require_documents=True)
    result = index.query(args.question, mode="mini", top_k=args.k, token_budget=args.max_tokens,
                         aggregate=args.aggregate)
    written = draw_reasoning_subgraph(result, index.graph_store, out)
    print(f"wrote {Path(written).resolve()}")
    print_result(result, False)
    if result.aggregated is not None:
        print_aggregated(result.aggregated)
    return 0


def print_aggregated(aggregated: Any) -> None:
    """The clusters LeanRAG's bottom-up path reached, their summaries and relations."""
    print(f"aggregation: from {', '.join(aggregated.anchors) or '-'} up to their lowest common clusters")
    for cluster in aggregated.clusters:
        print(f"  level {cluster.level} [{' / '.join(cluster.entities[:3])}]: {cluster.summary}")
    for relation in aggregated.relations:
        print(f"  {relation['source']} <-> {relation['target']}: {relation['strength']} relations "
              f"(e.g. {relation['example']})")
