"""Sec. 3.1 chunk nodes: token windows measured with the embedding model's tokenizer."""

from __future__ import annotations

import hashlib

from .embedding.base import Embedder
from .types import Chunk, Document

DEFAULT_CHUNK_TOKENS = 1200
DEFAULT_CHUNK_OVERLAP = 100


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
    chunks = []
    for order, text in enumerate(w for w in windows if w.strip()):
        chunks.append(Chunk(
            id=content_id("chunk", f"{document.id}\x00{order}\x00{text}"),
            doc_id=document.id,
            order=order,
            text=text,
            n_tokens=embedder.count_tokens(text),
            metadata=dict(document.metadata),
        ))
    return chunks
