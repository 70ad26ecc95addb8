"""Every development set beside the checkout through one loader, and the fixed tune/test split.

A set is a folder of ``../shared/data``: LiHuaWorld (``corpus/`` of chat sessions and
``qa_dev.json``), any folder with ``corpus.json`` (``[{id, text}]``) and ``questions.json``
(``[{id, question, answer, evidence, type}]``, evidence ids joined by ``<and>``), or a
documentation site: a ``corpus/`` folder of Markdown or reStructuredText pages (document id = the page's path under
``corpus/``) and ``questions.json`` whose evidence is a list of page paths.

Questions split by a fixed hash of their text: settings are chosen on the ``tune`` half and
figures reported on the ``test`` half. A documentation site keeps the split its README fixed
before any retrieval was run: odd-numbered question ids are ``tune``, even ones ``test``. The
split never changes between runs or machines.

Questions this repository adds to a set live in ``questions/<set>_*.json`` (the set's
``questions.json`` schema); they are appended to the set's own and split by the set's rule.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from minirag_core.types import Document

from benchmarks.quality import lihuaworld

#: ``$MINIRAG_DATA_ROOT`` if set, else ``../shared/data`` beside the checkout
DATA_ROOT = Path(os.environ.get("MINIRAG_DATA_ROOT") or Path(__file__).resolve().parents[3] / "shared" / "data")
#: the repository's own questions that extend a set: ``<set>_*.json`` beside this module
EXTRA_ROOT = Path(__file__).resolve().parent / "questions"
TUNE, TEST = "tune", "test"
#: page formats of a documentation site (Markdown, reStructuredText)
SITE_SUFFIXES = (".md", ".rst")


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
                  if (p / "corpus.json").is_file() or (p / "qa_dev.json").is_file() or _is_site(p))


def _is_site(path: Path) -> bool:
    return (path / "questions.json").is_file() and (path / "corpus").is_dir() \
        and any(p.suffix in SITE_SUFFIXES for p in (path / "corpus").rglob("*"))


def split_by_number(question_id: str) -> str:
    """A documentation site's fixed split: odd-numbered ids (``pd-001``) ``tune``, even ``test``."""
    digits = re.findall(r"\d+", question_id)
    if not digits:
        raise ValueError(f"question id {question_id!r} carries no number")
    return TUNE if int(digits[-1]) % 2 == 1 else TEST


def _evidence(value) -> tuple[str, ...]:
    items = value if isinstance(value, list) else str(value or "").split("<and>")
    return tuple(str(e).strip() for e in items if str(e).strip())


def _load_lihuaworld(path: Path) -> Dataset:
    docs, questions = lihuaworld.load_corpus_and_questions(path)
    rows = [Question(id=q.id, question=q.question, answer=q.answer, evidence=tuple(q.evidence), type=q.type,
                     split=split_of(q.question)) for q in questions]
    return Dataset(path.name, docs, rows)


def _question_rows(raw: list[dict], split_rule: Callable[[dict], str]) -> list[Question]:
    """``[{id, question, answer, evidence, type}]`` rows as questions, each put in its half by ``split_rule``."""
    return [Question(id=str(row["id"]), question=str(row["question"]), answer=str(row.get("answer", "")),
                     evidence=_evidence(row.get("evidence")), type=str(row.get("type", "")),
                     answer_aliases=tuple(row.get("answer_aliases", []) or ()), split=split_rule(row))
            for row in raw]


def _split_by_text(row: dict) -> str:
    return split_of(str(row["question"]))


def _split_by_id(row: dict) -> str:
    return split_by_number(str(row["id"]))


def _load_passages(path: Path) -> tuple[Dataset, Callable[[dict], str]]:
    corpus = json.loads((path / "corpus.json").read_text(encoding="utf-8"))
    docs = [Document(id=str(row["id"]), text=str(row["text"]), metadata={"source": str(row["id"])})
            for row in corpus]
    raw = json.loads((path / "questions.json").read_text(encoding="utf-8"))
    return Dataset(path.name, docs, _question_rows(raw, _split_by_text)), _split_by_text


def _load_site(path: Path) -> tuple[Dataset, Callable[[dict], str]]:
    pages = sorted(p for p in (path / "corpus").rglob("*") if p.suffix in SITE_SUFFIXES and p.is_file())
    docs = [Document(id=p.relative_to(path / "corpus").as_posix(), text=p.read_text(encoding="utf-8"),
                     metadata={"source": p.relative_to(path / "corpus").as_posix()}) for p in pages]
    raw = json.loads((path / "questions.json").read_text(encoding="utf-8"))
    return Dataset(path.name, docs, _question_rows(raw, _split_by_id)), _split_by_id


def extra_question_files(name: str, extra_root: Path = EXTRA_ROOT) -> list[Path]:
    """The repository's own question files for set ``name`` (``<name>_*.json``), sorted."""
    return sorted(extra_root.glob(f"{name}_*.json")) if extra_root.is_dir() else []


def _with_extra_questions(data: Dataset, split_rule: Callable[[dict], str], extra_root: Path) -> Dataset:
    """``data`` with the questions of :func:`extra_question_files` appended, split by the set's own rule;
    on a slice of the set (some pages only) the extra questions whose evidence is not there are left out."""
    questions = list(data.questions)
    held = {d.id for d in data.documents}
    for path in extra_question_files(data.name, extra_root):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            extra = _question_rows(raw, split_rule)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a list of {{id, question, answer, evidence, type}} rows ({exc})") from exc
        clash = {q.id for q in questions} & {q.id for q in extra}
        if clash:
            raise ValueError(f"{path}: question ids already in set {data.name!r}: {sorted(clash)}")
        questions += [q for q in extra if set(q.evidence) <= held]
    return Dataset(data.name, data.documents, questions)


def load(name: str, root: Path = DATA_ROOT, extra_root: Path = EXTRA_ROOT) -> Dataset:
    """One development set by folder name (``lihuaworld``, ``hotpotqa_100``, ``musique_50``, ...).

    A set with ``questions.json`` also gets the questions of ``extra_root/<name>_*.json`` (same schema).
    """
    path = root / name
    if (path / "qa_dev.json").is_file():
        return _load_lihuaworld(path)
    if (path / "corpus.json").is_file():
        return _with_extra_questions(*_load_passages(path), extra_root)
    if _is_site(path):
        return _with_extra_questions(*_load_site(path), extra_root)
    raise FileNotFoundError(f"no development set at {path} (want corpus.json + questions.json, qa_dev.json, "
                            "or corpus/*.md|*.rst + questions.json)")
