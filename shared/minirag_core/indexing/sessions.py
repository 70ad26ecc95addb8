"""``MiniRAGIndex``'s conversations (``retrieval/session.py``): ``index.session()`` and the
retrieval with a caller's query mapping that each turn runs."""

from __future__ import annotations

from typing import Any

from minirag_core.indexing.relation_vectors import noted_if_incomplete
from minirag_core.retrieval.filters import FilterInput, as_filter
from minirag_core.retrieval.session import MiniRAGSession
from minirag_core.types import QueryMapping, RetrievalResult

__all__ = ["Sessions"]


class Sessions:
    """``MiniRAGIndex``'s conversations: :meth:`session` and the retrieval a turn runs."""

    def session(self, **options: Any) -> MiniRAGSession:
        """A new conversation over this index (options: ``MiniRAGSession``'s)."""
        return MiniRAGSession(self, **options)  # type: ignore[arg-type]

    def query_mapped(self, query: str, mapping: QueryMapping | None, *, mode: str = "mini",
                     filter: FilterInput = None, **overrides: Any) -> RetrievalResult:
        """Retrieve for ``query`` with a query mapping the caller made (none for naive mode),
        from the documents passing ``filter``."""
        settings = self._plan(query, mode, overrides)  # type: ignore[attr-defined]
        if mode != "naive" and mapping is None:
            mapping = self.map_query(query)  # type: ignore[attr-defined]
        result = self._retrieve(query, mode, mapping, settings, as_filter(filter))  # type: ignore[attr-defined]
        return noted_if_incomplete(self._relations, result)  # type: ignore[attr-defined]
