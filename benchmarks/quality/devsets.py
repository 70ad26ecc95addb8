"""Every development set beside the checkout through one loader, and the fixed tune/test split.

A set is a folder of ``../shared/data``: LiHuaWorld (``corpus/`` of chat sessions and
``qa_dev.json``), any folder with ``corpus.json`` (``[{id, text}]``) and ``questions.json``
(``[{id, question, answer, evidence, type}]``, evidence ids joined by ``<and>``), or a folder of
Markdown pages (``corpus/**/*.md``, the relative path is the id) with ``questions.json`` whose
``evidence`` is a list of page paths (minimal loader; its split is the set's own: odd ids tune).

Questions split by a fixed hash of their text: settings are chosen on the ``tune`` half and
figures reported on the ``test`` half. The split never changes between runs or machines.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from minirag_core.types import Document

from benchmarks.quality import lihuaworld

#: ``$MINIRAG_DATA_ROOT`` if set, else ``../shared/data`` beside the checkout
DATA_ROOT = Path(os.environ.get("MINIRAG_DATA_ROOT") or Path(__file__).resolve().parents[3] / "shared" / "data")
TUNE, TEST = "tune", "test"


def split_of(question: str) -> str:
    """``tune`` or ``test``, by the first byte of the SHA-256 of the question text."""
    return TUNE if hashlib.sha256(question.strip().encode("utf-8")).digest()[0] % 2 == 0 else TEST


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    evidence: tuple[str, ...]          # document ids that hold the evidence
    type: str
    answer_aliases: tuple[str, ...] = ()
    split: str = field(default="")

    @property
    def has_evidence(self) -> bool:
        return bool(self.evidence)


@dataclass(frozen=True)
class Dataset:
    name: str
    documents: list[Document]
    questions: list[Question]

    def half(self, split: str) -> list[Question]:
        return [q for q in self.questions if q.split == split]


def available(root: Path = DATA_ROOT) -> list[str]:
    """Names of the development sets found under ``root``, sorted."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if (p / "corpus.json").is_file() or (p / "qa_dev.json").is_file() or _is_pages(p))


def _is_pages(path: Path) -> bool:
    return (path / "corpus").is_dir() and (path / "questions.json").is_file() and not (path / "qa_dev.json").exists()


def _load_pages(path: Path) -> Dataset:
    """Markdown pages under ``corpus/``; the set's fixed split: odd-numbered ids tune, even test."""
    pages = sorted(p for p in (path / "corpus").rglob("*.md") if p.is_file())
    docs = [Document(id=p.relative_to(path / "corpus").as_posix(), text=p.read_text(encoding="utf-8"),
                     metadata={"source": p.relative_to(path / "corpus").as_posix()}) for p in pages]
    questions = []
    for row in json.loads((path / "questions.json").read_text(encoding="utf-8")):
        number = int("".join(ch for ch in str(row["id"]) if ch.isdigit()) or 0)
        evidence = row.get("evidence") or ()
        questions.append(Question(id=str(row["id"]), question=str(row["question"]), answer=str(row.get("answer", "")),
                                  evidence=tuple([evidence] if isinstance(evidence, str) else evidence),
                                  type=str(row.get("type", "")), split=TUNE if number % 2 else TEST))
    return Dataset(path.name, docs, questions)


def _load_lihuaworld(path: Path) -> Dataset:
    docs, questions = lihuaworld.load_corpus_and_questions(path)
    rows = [Question(id=q.id, question=q.question, answer=q.answer, evidence=tuple(q.evidence), type=q.type,
                     split=split_of(q.question)) for q in questions]
    return Dataset(path.name, docs, rows)


def _load_passages(path: Path) -> Dataset:
    corpus = json.loads((path / "corpus.json").read_text(encoding="utf-8"))
    docs = [Document(id=str(row["id"]), text=str(row["text"]), metadata={"source": str(row["id"])})
            for row in corpus]
    raw = json.loads((path / "questions.json").read_text(encoding="utf-8"))
    questions = []
    for row in raw:
        evidence = tuple(e.strip() for e in str(row.get("evidence", "")).split("<and>") if e.strip())
        questions.append(Question(id=str(row["id"]), question=str(row["question"]), answer=str(row.get("answer", "")),
                                  evidence=evidence, type=str(row.get("type", "")),
                                  answer_aliases=tuple(row.get("answer_aliases", []) or ()),
                                  split=split_of(str(row["question"]))))
    return Dataset(path.name, docs, questions)


def load(name: str, root: Path = DATA_ROOT) -> Dataset:
    """One development set by folder name (``lihuaworld``, ``hotpotqa_100``, ``musique_50``, ...)."""
    path = root / name
    if (path / "qa_dev.json").is_file():
        return _load_lihuaworld(path)
    if (path / "corpus.json").is_file():
        return _load_passages(path)
    if _is_pages(path):
        return _load_pages(path)
    raise FileNotFoundError(f"no development set at {path} (want corpus.json + questions.json or qa_dev.json)")
