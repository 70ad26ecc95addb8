"""Chains of related questions over the development sets' test halves, written programmatically
from each set's own questions (the files in ``questions/chains/`` and how they were made:
``questions/chains/README.md``).

- A set whose questions need several passages (``<and>``-joined evidence, MuSiQue, HotpotQA): the data has no
  decomposition field, so each question becomes one sub-question per hop, "What is known about
  TITLE?" for each supporting passage's title (a passage id less its `` #n`` suffix), then the
  question itself: the hops an agent researches before asking the composed question.
- A documentation site: test questions sharing an evidence page, linked through shared pages
  (connected groups), in id order, cut into chains of at most :data:`MAX_TURNS`.
- LiHuaWorld (chats): test questions naming the same person (first name) other than the one most
  questions name (the protagonist), in id order, cut into chains of at most :data:`MAX_TURNS`.

A chain's evidence is the union of its questions' evidence.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from benchmarks.quality import devsets

MAX_TURNS = 4
#: question types of multi-passage questions other than MuSiQue's ``<n>hop...`` (HotpotQA's)
MULTI_HOP_TYPES = ("bridge", "comparison")
#: a run of capitalised words in a chat question (a name, once its leading question words go)
_RUN = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")
_LEADS = {"Did", "Does", "Do", "What", "When", "Where", "Which", "Who", "Whom", "Why", "How", "Is", "Was", "Were",
          "Are", "Has", "Have", "Had", "Can", "Could", "Would", "Will", "After", "Before", "In", "On", "At", "The",
          "According", "If", "For", "During", "Since", "Until", "A", "An"}


def _chunked(questions: list[devsets.Question]) -> list[list[devsets.Question]]:
    ordered = sorted(questions, key=lambda q: _number(q.id))
    return [ordered[i:i + MAX_TURNS] for i in range(0, len(ordered), MAX_TURNS) if len(ordered[i:i + MAX_TURNS]) > 1]


def _number(question_id: str) -> tuple[int, str]:
    digits = re.findall(r"\d+", question_id)
    return (int(digits[-1]) if digits else 0, question_id)


def hop_chains(questions: list[devsets.Question]) -> list[dict[str, Any]]:
    """One chain per multi-passage question: a sub-question per supporting passage, then the question."""
    chains = []
    for q in questions:
        titles = list(dict.fromkeys(re.sub(r" #\d+$", "", e) for e in q.evidence))
        turns = [{"question": f"What is known about {t}?", "evidence": [e for e in q.evidence
                                                                       if re.sub(r" #\d+$", "", e) == t]}
                 for t in titles]
        turns.append({"question": q.question, "evidence": list(q.evidence)})
        chains.append({"id": f"hops-{q.id}", "source_questions": [q.id], "turns": turns, "evidence": list(q.evidence)})
    return chains


def shared_page_chains(questions: list[devsets.Question]) -> list[dict[str, Any]]:
    """Questions linked by shared evidence pages (connected groups), cut into chains."""
    parent = {q.id: q.id for q in questions}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_page: dict[str, list[str]] = defaultdict(list)
    for q in questions:
        for page in q.evidence:
            by_page[page].append(q.id)
    for ids in by_page.values():
        for other in ids[1:]:
            parent[root(other)] = root(ids[0])
    groups: dict[str, list[devsets.Question]] = defaultdict(list)
    for q in questions:
        groups[root(q.id)].append(q)
    return _as_chains("pages", groups)


def person_chains(questions: list[devsets.Question]) -> list[dict[str, Any]]:
    """Questions naming the same person (not the protagonist), cut into chains."""
    names = {q.id: _names(q.question) for q in questions}
    counts = Counter(n for found in names.values() for n in set(found))
    top = counts.most_common(1)[0][0].replace(" ", "") if counts else ""  # the protagonist, however spelt
    groups: dict[str, list[devsets.Question]] = defaultdict(list)
    for q in questions:
        others = [n for n in names[q.id] if n.replace(" ", "") not in top and top not in n.replace(" ", "")]
        if others:
            groups[others[0].split()[0]].append(q)
    return _as_chains("person", groups)


def _names(question: str) -> list[str]:
    out = []
    for run in _RUN.findall(question):
        words = run.split()
        while words and words[0] in _LEADS:
            words.pop(0)
        if words:
            out.append(" ".join(words))
    return out


def _as_chains(kind: str, groups: dict[str, list[devsets.Question]]) -> list[dict[str, Any]]:
    chains = []
    for key in sorted(groups, key=lambda k: _number(min(q.id for q in groups[k]))):
        for part in _chunked(groups[key]):
            evidence = list(dict.fromkeys(e for q in part for e in q.evidence))
            chains.append({"id": f"{kind}-{part[0].id}", "source_questions": [q.id for q in part], "about": key,
                           "turns": [{"question": q.question, "evidence": list(q.evidence)} for q in part],
                           "evidence": evidence})
    return chains


def chains_for(data: devsets.Dataset, split: str = devsets.TEST) -> tuple[str, list[dict[str, Any]]]:
    """(how the chains were made, the chains) for a development set's ``split`` half."""
    questions = [q for q in data.half(split) if q.has_evidence]
    if data.name == "lihuaworld":
        return "person", person_chains(questions)
    if any(len(q.evidence) > 1 and (q.type[:1].isdigit() or q.type in MULTI_HOP_TYPES) for q in questions):
        return "hops", hop_chains([q for q in questions if len(q.evidence) > 1])
    return "pages", shared_page_chains(questions)
