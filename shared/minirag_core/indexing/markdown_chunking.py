"""Chunks of a Markdown or reStructuredText page cut at its structure: whole blocks (a paragraph, a list item, a
fenced code block) packed up to the token budget, a cut preferring the last heading, never
inside a code fence unless one block alone is larger than the budget. Each chunk's metadata
carries the heading path it starts under (``page › section › subsection``), which the extractor
reads as the chunk's subjects; a chunk that starts mid-page is thus still about its section."""

from __future__ import annotations

import hashlib
from typing import Iterator

from minirag_core.embedding.base import Embedder
from minirag_core.extraction import markdown, page_structure
from minirag_core.extraction.formats import FORMAT_METADATA_KEY, MARKDOWN, chunk_format
from minirag_core.indexing.offsets import OffsetFinder
from minirag_core.types import Chunk, Document

HEADING_PATH_KEY, PAGE_TITLE_KEY = markdown.HEADING_PATH_KEY, markdown.PAGE_TITLE_KEY


def is_markdown(document: Document) -> bool:
    """Declared Markdown, a Markdown or reST file name, or Markdown by shape (headings or code fences)."""
    declared = str(document.metadata.get(FORMAT_METADATA_KEY, "")).lower()
    if declared:
        return declared == MARKDOWN
    name = page_name(document).lower()
    return name.endswith(page_structure.PAGE_EXTENSIONS) or chunk_format(document.text[:20000]) == MARKDOWN


def page_name(document: Document) -> str:
    """The document's file name (its source path, else its id): it tells which markup it is in."""
    return str(document.metadata.get("source") or document.metadata.get("file_path") or document.id)


def _units(text: str, found: list[markdown.Block]) -> list[tuple[str, list[str], bool]]:
    """(source text, heading path, starts with a heading) per block, lines before the first
    block joined to it, every source line in exactly one unit."""
    lines = text.splitlines(keepends=True)
    if not found:
        return [(text, [], False)]
    paths = markdown.heading_paths(found, "")
    starts = [0] + [b.line for b in found[1:]] + [len(lines)]
    out = []
    for i, block in enumerate(found):
        piece = "".join(lines[starts[i]:starts[i + 1]])
        if piece.strip():
            out.append((piece, [p for p in paths[i] if p], block.kind == "heading"))
    return out


def markdown_chunks(document: Document, embedder: Embedder, *, chunk_tokens: int,
                    overlap_tokens: int, ref_labels: dict[str, str] | None = None) -> Iterator[Chunk]:
    """The page's chunks in order (``overlap_tokens`` applies only inside a block cut in windows);
    a reST chunk's metadata names the pages its ``:ref:`` labels lead to (``ref_labels``)."""
    found = page_structure.blocks(document.text, page_name(document))
    units = _units(document.text, found)
    title = markdown.page_title(found, document.id)
    pieces: list[tuple[str, list[str]]] = []
    current: list[tuple[str, list[str], bool, int]] = []

    def flush(upto: int) -> None:
        if upto:
            pieces.append(("".join(u[0] for u in current[:upto]), current[0][1]))
            del current[:upto]

    for text, path, heading in units:
        size = embedder.count_tokens(text)
        if size > chunk_tokens:  # one block larger than a chunk: token windows of it alone
            flush(len(current))
            pieces += [(w, path) for w in embedder.token_windows(text, chunk_tokens, overlap_tokens) if w.strip()]
            continue
        if current and sum(u[3] for u in current) + size > chunk_tokens:
            cut = max((i for i, u in enumerate(current) if u[2] and i > 0), default=0)
            flush(cut if cut and sum(u[3] for u in current[:cut]) >= chunk_tokens // 2 else len(current))
            if sum(u[3] for u in current) + size > chunk_tokens:
                flush(len(current))
        current.append((text, path, heading, size))
    flush(len(current))
    offsets = OffsetFinder(document.text)
    for order, (text, path) in enumerate(pieces):
        full = [title, *path] if not path or path[0] != title else path
        key = "\x00".join([document.id, str(order), text, *full])
        start, end = offsets.place(text)
        yield Chunk(id=f"chunk-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:32]}", doc_id=document.id,
                    order=order, text=text, n_tokens=embedder.count_tokens(text),
                    metadata={**document.metadata, HEADING_PATH_KEY: full, PAGE_TITLE_KEY: title,
                              **_refs(text, ref_labels, page_name(document))}, start_index=start, end_index=end)


def _refs(text: str, ref_labels: dict[str, str] | None, name: str) -> dict:
    if not ref_labels or not page_structure.is_restructuredtext(name):
        return {}
    used = page_structure.used_labels(text, ref_labels)
    return {page_structure.REF_TARGETS_KEY: used} if used else {}
