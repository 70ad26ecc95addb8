"""langchain-tests' standard retriever suite against MiniRAGRetriever.from_texts.

The suite constructs retrievers many times (k=3, k=1, default); the index over 12
LiHuaWorld sessions is built by the first ``from_texts`` call and reused by the rest. It is
persisted under pytest's base temp dir, where test_langchain_retriever.py keeps the same
sessions: whichever module runs second reopens it (every document unchanged) instead of
extracting again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_minirag import MiniRAGRetriever

LIHUAWORLD = Path(os.environ.get("LIHUAWORLD_DIR", Path(__file__).resolve().parents[3] / "shared/data/lihuaworld"))
RETRIEVER_FIELDS = ("k", "mode", "token_budget")


def _sessions() -> tuple[list[str], list[dict[str, str]], list[str]]:
    corpus = LIHUAWORLD / "corpus"
    files = sorted((corpus / "week1").glob("*.txt"))[:9] + sorted((corpus / "week2").glob("*.txt"))[:3]
    texts = [f.read_text(encoding="utf-8") for f in files]
    metadatas = [{"source": f"{f.parent.name}/{f.name}", "session": t.splitlines()[0].removeprefix("Time:").strip()}
                 for f, t in zip(files, texts)]
    return texts, metadatas, [f.stem for f in files]


TEXTS, METADATAS, IDS = _sessions()
_BUILT: dict[str, MiniRAGRetriever] = {}
_WORKDIR: dict[str, Path] = {}


def from_texts_once(**params: Any) -> MiniRAGRetriever:
    """``MiniRAGRetriever.from_texts`` the first time; later calls reuse its index."""
    if "index" not in _BUILT:
        _BUILT["index"] = MiniRAGRetriever.from_texts(**params)
        return _BUILT["index"]
    return MiniRAGRetriever.from_index(_BUILT["index"].index, **{f: params[f] for f in RETRIEVER_FIELDS if f in params})


@pytest.fixture(scope="module", autouse=True)
def _module_index(tmp_path_factory: pytest.TempPathFactory):
    _WORKDIR["path"] = tmp_path_factory.getbasetemp() / "langchain-lihuaworld"
    yield
    _BUILT.clear()


class TestMiniRAGRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> Callable[..., MiniRAGRetriever]:  # type: ignore[override]
        return from_texts_once

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"texts": TEXTS, "metadatas": METADATAS, "ids": IDS, "persist_directory": _WORKDIR["path"], "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return "What time is Li Hua's lunch with Wolfgang Schulz at the cozy café downtown?"


class TestMiniRAGRetrieverStandardLight(TestMiniRAGRetrieverStandard):
    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {**super().retriever_constructor_params, "mode": "light"}


class TestMiniRAGRetrieverStandardNaive(TestMiniRAGRetrieverStandard):
    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {**super().retriever_constructor_params, "mode": "naive"}


def test_index_is_built_once() -> None:
    """Every construction after the first (the suite's k=3, k=1, ...) shares the first one's index."""
    params = {"texts": TEXTS, "metadatas": METADATAS, "ids": IDS, "persist_directory": _WORKDIR["path"]}
    first = from_texts_once(**params)
    assert first.index.stats()["documents"] == len(TEXTS)
    again = from_texts_once(**params, k=2, mode="light")
    assert again.index is first.index and (again.k, again.mode) == (2, "light")
