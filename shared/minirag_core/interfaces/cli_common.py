"""What every ``minirag`` command shares: the one-line error, opening a workdir, the model spec."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minirag_core.retrieval.filters import MetadataFilter

DEFAULT_WORKDIR = "minirag.workdir"


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 2."""


def llm_from_spec(spec: str | None, host: str | None) -> Any:
    """``ollama:MODEL`` as an ``OllamaBackend``; ``llamacpp:PATH`` (a base model, prompted as raw
    text) or ``llamacpp-chat:PATH`` (through the model's chat template) as a ``LlamaCppBackend``
    on a GGUF file; None without a spec."""
    if not spec:
        return None
    provider, _, model = spec.partition(":")
    if provider in ("llamacpp", "llamacpp-chat") and model:
        if not Path(model).expanduser().is_file():
            raise CLIError(f"--llm {provider}:PATH: no model file at {model}")
        from minirag_core.llm.llamacpp_backend import LlamaCppBackend

        style = "chat" if provider == "llamacpp-chat" else "completion"
        return LlamaCppBackend(Path(model).expanduser(), prompt_style=style)
    if provider != "ollama" or not model:
        raise CLIError(f"--llm must look like ollama:MODEL, llamacpp:PATH or llamacpp-chat:PATH (got {spec!r})")
    from minirag_core.llm.ollama_backend import OllamaBackend

    return OllamaBackend(model, host) if host else OllamaBackend(model)


def workdir_of(args: argparse.Namespace) -> Path:
    workdir = Path(args.workdir)
    if workdir.exists() and not workdir.is_dir():
        raise CLIError(f"--workdir {workdir} is a file, not an index folder; choose another path")
    return workdir


def no_index(workdir: Path) -> CLIError:
    return CLIError(f"no index at {workdir}; run `minirag index PATH --workdir {workdir}` first")


def store_errors() -> tuple[type[BaseException], ...]:
    """The errors of opening a workdir that are the user's to fix (one line each)."""
    from minirag_core.indexing.index import IndexSettingsMismatch
    from minirag_core.indexing.workdir_lock import WorkdirBusy
    from minirag_core.storage.locations import StoreMismatch, StoreUnreachable

    return IndexSettingsMismatch, WorkdirBusy, StoreMismatch, StoreUnreachable


def as_cli_error(exc: BaseException) -> CLIError:
    """The one-line form of a store error, naming command-line flags rather than Python keywords."""
    from minirag_core.storage.locations import StoreMismatch

    return CLIError(exc.render(cli=True) if isinstance(exc, StoreMismatch) else str(exc))


def open_index(args: argparse.Namespace, *, llm: Any = None, require_documents: bool = False) -> Any:
    """The workdir's ``MiniRAGIndex``; with ``require_documents`` an empty index is an error."""
    from minirag_core.indexing.index import MiniRAGIndex

    workdir = workdir_of(args)
    if args.command not in ("index", "serve") and not (workdir / "manifest.json").exists():
        raise no_index(workdir)
    try:
        index = MiniRAGIndex(workdir, llm=llm, chroma_url=getattr(args, "chroma_url", None),
                             falkordb_url=getattr(args, "falkordb_url", None),
                             graph_backend=getattr(args, "graph_backend", None),
                             show_progress=not getattr(args, "quiet", False),
                             lock_timeout=getattr(args, "lock_timeout", None),
                             workers=getattr(args, "workers", None),
                             worker_backend=getattr(args, "worker_backend", "process"),
                             namespace=getattr(args, "namespace", None))
    except store_errors() as exc:
        raise as_cli_error(exc) from exc
    except ValueError as exc:  # a namespace that is no valid name
        raise CLIError(str(exc)) from exc
    if require_documents and not index.document_ids():
        raise CLIError(f"the index at {workdir} is empty: no document was indexed (were all files skipped?); "
                       f"run `minirag index PATH --workdir {workdir}` on text, Markdown or HTML files")
    return index


def check_question(question: str) -> None:
    if not question.strip():
        raise CLIError("the question is empty")


def where_filter(pairs: list[str]) -> MetadataFilter | None:
    """The metadata filter of ``--where KEY=VALUE`` options (None without any)."""
    from minirag_core.retrieval.filters import FilterError, from_where_args

    try:
        return from_where_args(pairs)
    except FilterError as exc:
        raise CLIError(str(exc)) from exc
