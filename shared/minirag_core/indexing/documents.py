"""Input validation: what may become a document, and a clear reason when it may not."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Union

from minirag_core.types import Document

DEFAULT_MAX_DOCUMENT_BYTES = 50_000_000  # documents stream through indexing in batches

DocumentInput = Union[Document, str, bytes, tuple]


@dataclass
class InsertReport:
    """What one ``insert`` call did with each document."""

    inserted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)  # document id or position -> reason
    chunks: int = 0
    unparsed_records: int = 0
    #: chunks the extractor failed on (chunk id -> document id): indexed without entities, retried by the next write
    failed_chunks: dict[str, str] = field(default_factory=dict)
    #: chunks that had failed before and were extracted by this write (chunk id -> document id)
    retried_chunks: dict[str, str] = field(default_factory=dict)
    #: model tokens this write spent extracting (``minirag_core.llm.usage.TokenUsage.to_dict``)
    token_usage: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        text = (f"{len(self.inserted)} inserted, {len(self.updated)} updated, {len(self.unchanged)} unchanged, "
                f"{len(self.rejected)} rejected, {self.chunks} new chunks")
        if self.retried_chunks:
            text += f", {len(self.retried_chunks)} chunks that had failed extracted now"
        if self.failed_chunks:
            text += (f", {len(self.failed_chunks)} chunks without entities (extraction failed; see the log; "
                     "the next write tries them again)")
        return text + "".join(f"\n  rejected {k}: {v}" for k, v in self.rejected.items())


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _has_visible_text(text: str) -> bool:
    """False for text of whitespace and invisible format characters only (zero-width
    spaces, BOMs, word joiners: ``str.strip`` keeps those, but they index as nothing)."""
    import unicodedata

    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in text)


def _looks_binary(text: str) -> bool:
    if "\x00" in text:
        return True
    sample = text[:4096]
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\n\r\t\f")
    return control > 0.1 * max(len(sample), 1)


def validate_documents(items: Iterable[DocumentInput], *, max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
                       ) -> tuple[list[Document], dict[str, str]]:
    """Turn user input into documents; return them with the reasons others were rejected.

    Accepts ``Document``, plain text, UTF-8 bytes or ``(text, metadata)`` / ``(id, text, metadata)``
    tuples. A document without an id gets the hash of its text.
    """
    accepted: list[Document] = []
    rejected: dict[str, str] = {}
    seen: set[str] = set()
    for position, item in enumerate(items):
        label = f"#{position}"
        doc_id, text, metadata = None, item, {}
        if isinstance(item, Document):
            doc_id, text, metadata = item.id, item.text, dict(item.metadata)
        elif isinstance(item, tuple) and len(item) == 2:
            text, metadata = item
        elif isinstance(item, tuple) and len(item) == 3:
            doc_id, text, metadata = item
        label = doc_id or label
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as exc:
                rejected[label] = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
                continue
        if not isinstance(text, str):
            rejected[label] = f"expected text, got {type(text).__name__}"
            continue
        if not isinstance(metadata, dict):
            rejected[label] = "metadata must be a dict"
            continue
        if len(text.encode("utf-8", errors="replace")) > max_bytes:
            rejected[label] = f"larger than max_document_bytes={max_bytes}; split it or raise the limit"
            continue
        if not text.strip() or not _has_visible_text(text):
            rejected[label] = "empty or whitespace-only"
            continue
        if _looks_binary(text):
            rejected[label] = "looks binary (NUL or control characters)"
            continue
        doc_id = doc_id or f"doc-{content_hash(text)[:32]}"
        if doc_id in seen:
            rejected[doc_id] = "duplicate document id in this call (the first one was kept)"
            continue
        seen.add(doc_id)
        accepted.append(Document(id=doc_id, text=text, metadata=_json_safe(metadata)))
    return accepted, rejected


def _json_safe(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata is stored as JSON: keep JSON values, render anything else as text."""
    import json

    safe = {}
    for key, value in metadata.items():
        try:
            json.dumps(value)
            safe[str(key)] = value
        except (TypeError, ValueError):
            safe[str(key)] = str(value)
    return safe
