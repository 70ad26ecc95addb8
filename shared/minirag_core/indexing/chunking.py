"""Sec. 3.1 chunk nodes: token windows measured with the embedding model's tokenizer."""

from __future__ import annotations

import hashlib
from typing import Iterator

from minirag_core.embedding.base import Embedder
from minirag_core.indexing.markdown_chunking import is_markdown, markdown_chunks
from minirag_core.indexing.offsets import OffsetFinder
from minirag_core.types import Chunk, Document

DEFAULT_CHUNK_TOKENS = 1200
DEFAULT_CHUNK_OVERLAP = 100
#: documents longer than this are tokenised a segment at a time (cut at a line break), so a
#: large file streams through indexing in bounded memory
SEGMENT_CHARS = 200_000


def content_id(prefix: str, text: str) -> str:
    """A stable id from content: the same text always gets the same id."""
    return f"{prefix}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}"


def chunk_document(document: Document, embedder: Embedder, *,
                   chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                   overlap_tokens: int = DEFAULT_CHUNK_OVERLAP) -> list[Chunk]:
    """Split a document into overlapping token windows.

    Chunk ids hash the document id, order and text, so re-chunking the same document
    gives the same ids and two documents never share a chunk node.
    """
    windows = embedder.token_windows(document.text, chunk_tokens, overlap_tokens)
    offsets = OffsetFinder(document.text)
    return [_chunk(document, order, text, embedder, offsets) for order, text in enumerate(w for w in windows if w.strip())]


def _chunk(document: Document, order: int, text: str, embedder: Embedder, offsets: OffsetFinder) -> Chunk:
    start, end = offsets.place(text)
    return Chunk(id=content_id("chunk", f"{document.id}\x00{order}\x00{text}"), doc_id=document.id, order=order,
                 text=text, n_tokens=embedder.count_tokens(text), metadata=dict(document.metadata),
                 start_index=start, end_index=end)


def _segments(text: str, size: int) -> Iterator[str]:
    """Consecutive pieces of about ``size`` characters, cut after a line break where one is near."""
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind("\n", start + size // 2, end)
            end = cut + 1 if cut != -1 else end
        yield text[start:end]
        start = end


def iter_chunks(document: Document, embedder: Embedder, *, chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                overlap_tokens: int = DEFAULT_CHUNK_OVERLAP, segment_chars: int = SEGMENT_CHARS,
                ref_labels: dict[str, str] | None = None) -> Iterator[Chunk]:
    """The chunks of ``chunk_document``, produced lazily; a document up to ``segment_chars``
    gives exactly ``chunk_document``'s chunks, a longer one is windowed a segment at a time.
    A Markdown page is cut at its structure instead (:mod:`.markdown_chunking`)."""
    if is_markdown(document):
        yield from markdown_chunks(document, embedder, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens,
                                   ref_labels=ref_labels)
        return
    if len(document.text) <= segment_chars:
        yield from chunk_document(document, embedder, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens)
        return
    order = 0
    offsets = OffsetFinder(document.text)
    for segment in _segments(document.text, segment_chars):
        for text in embedder.token_windows(segment, chunk_tokens, overlap_tokens):
            if not text.strip():
                continue
            yield _chunk(document, order, text, embedder, offsets)
            order += 1
