"""The extractor and query mapper an index uses when none is given: a model's (``llm``) or the
offline ones, sharing one entity typer whose type vectors are kept in the workdir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from minirag_core.embedding.base import Embedder
from minirag_core.extraction.base import Extractor, QueryMapper
from minirag_core.llm.base import LLMBackend
from minirag_core.llm.cache import LLMCallCache


def default_models(embedder: Embedder, llm: LLMBackend | None, cache: LLMCallCache, type_vectors: Path | None,
                   extractor: Extractor | None = None,
                   query_mapper: QueryMapper | None = None) -> tuple[Extractor, QueryMapper]:
    """``extractor`` and ``query_mapper`` where given, else the defaults (the typer built once,
    only if an offline part needs it)."""
    typer: Any = None

    def shared_typer() -> Any:
        nonlocal typer
        if typer is None:
            from minirag_core.extraction.entity_typing import EntityTyper

            typer = EntityTyper(embedder, vectors_path=type_vectors)
        return typer

    from minirag_core.extraction.offline_extractor import OfflineExtractor
    from minirag_core.retrieval.query.offline_mapping import OfflineQueryMapper

    if extractor is None:
        extractor = OfflineExtractor(embedder, typer=shared_typer())
        if llm is not None:  # the offline extractor takes the chunks the model gives nothing readable for
            from minirag_core.extraction.llm_extractor import LLMExtractor

            extractor = LLMExtractor(llm, cache=cache, fallback=extractor)
    if query_mapper is None:
        query_mapper = OfflineQueryMapper(embedder, typer=shared_typer())
        if llm is not None:
            from minirag_core.retrieval.query.model_mapping import LLMQueryMapper

            query_mapper = LLMQueryMapper(llm, cache=cache, fallback=query_mapper)
    return extractor, query_mapper
