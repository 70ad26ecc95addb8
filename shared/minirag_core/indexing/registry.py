"""The document registry: which documents an index holds, their content hash and chunks.

Stored in the graph's attributes (``graph.json``) as ``{doc_id: {"hash", "chunks", "metadata"}}``;
:class:`DocumentRecord` is the typed view of one entry, written back in that same format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from minirag_core.retrieval.filters import MetadataFilter, Passing, passing


@dataclass
class DocumentRecord:
    """One indexed document. ``hash`` is empty while the document is only partly indexed
    (an interrupted insert), so a re-run redoes it."""

    hash: str = ""
    chunks: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return bool(self.hash)

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.hash, "chunks": list(self.chunks), "metadata": self.metadata}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "DocumentRecord":
        return cls(hash=str(data.get("hash", "")), chunks=list(data.get("chunks", [])),
                   metadata=dict(data.get("metadata", {})))


class DocumentRegistry:
    """Typed access to the registry dict held in ``raw`` (the graph's ``documents`` attribute),
    which stays the stored form: every change is written back to it."""

    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        self.raw = raw

    def __len__(self) -> int:
        return len(self.raw)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.raw

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def get(self, doc_id: str) -> DocumentRecord | None:
        found = self.raw.get(doc_id)
        return DocumentRecord.from_json(found) if found is not None else None

    def chunk_ids(self, doc_id: str) -> list[str]:
        return list(self.raw[doc_id]["chunks"])

    def put(self, doc_id: str, record: DocumentRecord) -> None:
        self.raw[doc_id] = record.to_json()

    def remove(self, doc_id: str) -> None:
        del self.raw[doc_id]

    def add_chunks(self, doc_id: str, chunk_ids: list[str], digest: str, metadata: dict[str, Any]) -> None:
        """Append a document's next chunks; ``digest`` (empty until its last piece) becomes its hash."""
        record = self.get(doc_id) or DocumentRecord(metadata=metadata)
        record.chunks.extend(chunk_ids)
        record.hash = digest
        self.put(doc_id, record)

    def metadata(self) -> dict[str, dict[str, Any]]:
        return {d: r.get("metadata", {}) for d, r in self.raw.items()}

    def passing(self, metadata_filter: MetadataFilter) -> Passing:
        """The documents whose metadata pass ``metadata_filter``, with their chunks."""
        return passing(metadata_filter, ((d, r.get("metadata", {}), r.get("chunks", ())) for d, r in self.raw.items()))

    def metadata_view(self) -> "MetadataView":
        """Each document's metadata, read on access (a query needs a few, not all)."""
        return MetadataView(self.raw)


class MetadataView(Mapping[str, dict[str, Any]]):
    """Read-only ``{doc_id: metadata}`` over the stored registry, without copying it."""

    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        self._raw = raw

    def __getitem__(self, doc_id: str) -> dict[str, Any]:
        return self._raw[doc_id].get("metadata", {})

    def __len__(self) -> int:
        return len(self._raw)

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)
