"""The insert's batches: whole documents together, a long document in pieces, about
``INSERT_BATCH_CHUNKS`` chunks each, so that a crash loses at most the batch under way."""

from __future__ import annotations

from typing import Iterable, Iterator

from minirag_core.embedding.base import Embedder
from minirag_core.indexing.chunking import iter_chunks
from minirag_core.types import Chunk, Document

INSERT_BATCH_CHUNKS = 64
#: (document, content hash, chunks, complete): ``complete`` False for a piece before a long document's last
Entry = tuple[Document, str, list[Chunk], bool]


def iter_batches(pending: Iterable[tuple[Document, str]], embedder: Embedder, *, chunk_tokens: int,
                 chunk_overlap: int, batch_chunks: int = INSERT_BATCH_CHUNKS,
                 ref_labels: dict[str, str] | None = None) -> Iterator[list[Entry]]:
    """Batches of whole documents; a long document alone, a piece at a time (a batch never ends
    inside a short document). ``ref_labels``: reST label -> page key, for the chunks' links."""
    batch: list[Entry] = []
    for document, digest in pending:
        chunks: list[Chunk] = []
        for chunk in iter_chunks(document, embedder, chunk_tokens=chunk_tokens, overlap_tokens=chunk_overlap,
                                 ref_labels=ref_labels):
            chunks.append(chunk)
            if len(chunks) >= batch_chunks:  # a long document: saved piece by piece
                if batch:  # whole documents first
                    yield batch
                    batch = []
                yield [(document, digest, chunks, False)]
                chunks = []
        batch.append((document, digest, chunks, True))
        if sum(len(c) for _, _, c, _ in batch) >= batch_chunks:
            yield batch
            batch = []
    if batch:
        yield batch


def batch_chunks(batch: list[Entry]) -> list[Chunk]:
    """Every chunk of a batch, in order."""
    return [c for _, _, chunks, _ in batch for c in chunks]
