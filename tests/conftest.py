"""Shared fixtures: the offline embedding model (loaded once) and LiHuaWorld slices."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

REPO = Path(__file__).resolve().parents[1]
LIHUAWORLD = Path(os.environ.get("LIHUAWORLD_DIR", REPO.parent / "shared" / "data" / "lihuaworld"))


def lihuaworld_documents(limit: int | None = None, weeks: tuple[str, ...] | None = None):
    """Sessions as core Documents (id = session time from the first line)."""
    from minirag_core.types import Document

    files = sorted((LIHUAWORLD / "corpus").glob("*/*.txt"))
    if weeks:
        files = [f for f in files if f.parent.name in weeks]
    docs = []
    for path in files[:limit]:
        text = path.read_text(encoding="utf-8")
        session = text.splitlines()[0].removeprefix("Time:").strip()
        docs.append(Document(id=session, text=text, metadata={"session": session, "source": str(path.name)}))
    return docs


@pytest.fixture(scope="session")
def embedder():
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def lihua_docs():
    return lihuaworld_documents(limit=24)
