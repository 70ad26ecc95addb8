"""Loader for the LiHuaWorld benchmark (the MiniRAG paper's dataset).

Layout (``../shared/data/lihuaworld`` beside the repository, or ``$LIHUAWORLD_DIR``)::

    corpus/<folder>/<file>.txt   one chat session each; first line ``Time: YYYYMMDD_HH:MM``
    qa_dev.json                  [{id, question, answer, evidence, type}, ...]

Sessions become core ``Document``s whose id is the session time (``20260408_08:38``), so a
retrieved chunk's ``doc_id`` is directly comparable with a question's evidence sessions.
Questions may come from ``qa_dev.json`` or any other file in the same format.

The dev file has a few hand-typing slips in its ``evidence`` field (a trailing space, a
``Time:`` prefix, ``0815`` for ``08:15``, and one row whose answer and evidence columns
slipped: ``answer = "...\\t20260916_16:00"``, ``evidence = "What"``). ``load_questions``
repairs these and records each repair in ``Question.repairs``; evidence that still names
no session is kept in ``Question.unknown_evidence`` (and counted as missed by the metrics).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from minirag_core.types import Document

REPO_ROOT = Path(__file__).resolve().parents[2]
QUESTION_TYPES = ("Single", "Multi", "Null")

_TIME_LINE = re.compile(r"^\s*Time:\s*(\d{8})_(\d{2}):?(\d{2})\s*$")
_SESSION = re.compile(r"^(?:Time:\s*)?(\d{8})_(\d{2}):?(\d{2})$")
_TRAILING_SESSION = re.compile(r"\t\s*((?:Time:\s*)?\d{8}_\d{2}:?\d{2})\s*$")


def default_dir() -> Path:
    """``$LIHUAWORLD_DIR`` if set, else ``../shared/data/lihuaworld`` from the repository root."""
    env = os.environ.get("LIHUAWORLD_DIR")
    if env:
        return Path(env).expanduser().resolve()
    return (REPO_ROOT.parent / "shared" / "data" / "lihuaworld").resolve()


def default_questions_path(root: Path | None = None) -> Path:
    return (root or default_dir()) / "qa_dev.json"


def normalise_session(text: str) -> str | None:
    """``'Time: 20260930_16:00'`` / ``'20260619_0815'`` / ``' 20260204_15:00 '`` -> canonical id."""
    m = _SESSION.match(text.strip())
    return f"{m.group(1)}_{m.group(2)}:{m.group(3)}" if m else None


# -- corpus -----------------------------------------------------------------------------------

def session_id(text: str) -> str:
    """The session id from the first line ``Time: YYYYMMDD_HH:MM`` of a session file."""
    first = text.split("\n", 1)[0]
    m = _TIME_LINE.match(first)
    if not m:
        raise ValueError(f"first line is not 'Time: YYYYMMDD_HH:MM': {first[:80]!r}")
    return f"{m.group(1)}_{m.group(2)}:{m.group(3)}"


def corpus_files(root: Path | None = None) -> list[Path]:
    corpus = (root or default_dir()) / "corpus"
    if not corpus.is_dir():
        raise FileNotFoundError(f"no LiHuaWorld corpus at {corpus} (set LIHUAWORLD_DIR)")
    return sorted(corpus.rglob("*.txt"))


def load_corpus(root: Path | None = None) -> list[Document]:
    """All sessions as ``Document(id=session, text=whole file, metadata={session, path})``,
    in chronological order. Raises if two files claim the same session time."""
    root = root or default_dir()
    docs: dict[str, Document] = {}
    for path in corpus_files(root):
        text = path.read_text(encoding="utf-8")
        sid = session_id(text)
        rel = path.relative_to(root).as_posix()
        if sid in docs:
            raise ValueError(f"session {sid} appears in {docs[sid].metadata['path']} and {rel}")
        docs[sid] = Document(id=sid, text=text, metadata={"session": sid, "path": rel})
    return [docs[k] for k in sorted(docs)]


def corpus_bytes(root: Path | None = None) -> int:
    return sum(p.stat().st_size for p in corpus_files(root))


# -- questions ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    evidence: tuple[str, ...]          # canonical session ids (empty for "N/A")
    type: str                          # Single | Multi | Null (as given in the file)
    unknown_evidence: tuple[str, ...] = ()  # evidence strings that name no known session
    repairs: tuple[str, ...] = field(default=())

    @property
    def has_evidence(self) -> bool:
        return bool(self.evidence or self.unknown_evidence)


def _parse_question(row: dict, sessions: set[str] | None) -> Question:
    repairs: list[str] = []
    answer = str(row.get("answer", "")).strip()
    raw = str(row.get("evidence", "") or "")
    # The answer and evidence columns slipped: "answer\tSESSION" with junk evidence.
    slipped = _TRAILING_SESSION.search(answer)
    if slipped and (raw.strip().upper() in ("", "N/A") or not any(normalise_session(p) for p in raw.split("<and>"))):
        repairs.append(f"evidence {raw!r} taken from the answer's trailing {slipped.group(1)!r}")
        raw, answer = slipped.group(1), answer[: slipped.start()].strip()
    evidence: list[str] = []
    unknown: list[str] = []
    if raw.strip() and raw.strip().upper() != "N/A":
        for part in raw.split("<and>"):
            if not part.strip():
                continue
            canon = normalise_session(part)
            if canon is None or (sessions is not None and canon not in sessions):
                unknown.append(part)
                continue
            if canon != part:
                repairs.append(f"evidence {part!r} -> {canon!r}")
            if canon not in evidence:
                evidence.append(canon)
    return Question(id=str(row["id"]), question=str(row["question"]), answer=answer,
                    evidence=tuple(evidence), type=str(row.get("type", "")).strip(),
                    unknown_evidence=tuple(unknown), repairs=tuple(repairs))


def load_questions(path: str | Path | None = None, sessions: Iterable[str] | None = None) -> list[Question]:
    """Questions from ``qa_dev.json`` (default) or another file of the same format.

    ``sessions``: the corpus's session ids; evidence naming none of them goes to
    ``unknown_evidence``. Accepts a JSON list or JSON lines."""
    path = Path(path) if path is not None else default_questions_path()
    text = path.read_text(encoding="utf-8")
    try:
        rows = json.loads(text)
    except json.JSONDecodeError:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(rows, dict):  # {"questions": [...]} or {id: row}
        rows = rows.get("questions") or list(rows.values())
    known = set(sessions) if sessions is not None else None
    return [_parse_question(r, known) for r in rows]


def load_corpus_and_questions(data: Path | None = None, questions_path: str | Path | None = None,
                              limit: int | None = None) -> tuple[list[Document], list[Question]]:
    """The corpus and its questions (the first ``limit`` of them, if given), as every script loads them."""
    data = data.resolve() if data else default_dir()
    docs = load_corpus(data)
    questions = load_questions(questions_path or default_questions_path(data), sessions=[d.id for d in docs])
    return docs, (questions[:limit] if limit else questions)
