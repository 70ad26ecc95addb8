"""Retrieval metrics that need no LLM judge (the MiniRAG paper's LiHuaWorld setting).

- evidence recall@k: share of a question's evidence sessions among the sessions of the
  retrieved chunks (questions with evidence only);
- all-evidence@k: 1 if every evidence session was retrieved, else 0;
- answer-in-context@k: the normalised gold answer occurs in the normalised retrieved text
  (Single questions only);
- context tokens: sum of the retrieved chunks' ``n_tokens``;
- latency percentiles.
"""

from __future__ import annotations

import math
import re
import string
from typing import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "‘’“”–—…"})


def normalise_answer(text: str) -> str:
    """SQuAD-style normalisation: lowercase, punctuation -> space, drop articles, squeeze spaces."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def evidence_recall(evidence: Iterable[str], retrieved_sessions: Iterable[str]) -> float | None:
    """Share of evidence sessions among the retrieved sessions; None when there is no evidence."""
    wanted = set(evidence)
    if not wanted:
        return None
    return len(wanted & set(retrieved_sessions)) / len(wanted)


def all_evidence(evidence: Iterable[str], retrieved_sessions: Iterable[str]) -> float | None:
    wanted = set(evidence)
    if not wanted:
        return None
    return 1.0 if wanted <= set(retrieved_sessions) else 0.0


def answer_in_context(answer: str, texts: Iterable[str]) -> float | None:
    """1 if the normalised answer occurs (on word boundaries) in one of the normalised
    retrieved texts; None for an answer that normalises to nothing."""
    gold = normalise_answer(answer)
    if not gold:
        return None
    needle = f" {gold} "
    return 1.0 if any(needle in f" {normalise_answer(t)} " for t in texts) else 0.0


def exact_match(prediction: str, answer: str) -> float:
    return 1.0 if prediction.strip() == answer.strip() else 0.0


def normalised_match(prediction: str, answer: str) -> float:
    """1 if the normalised gold answer equals or occurs (on word boundaries) in the normalised
    prediction; a yes/no gold answer must be the prediction's first word ("No, ... yes" is wrong)."""
    gold, pred = normalise_answer(answer), normalise_answer(prediction)
    if not gold:
        return 1.0 if not pred else 0.0
    if gold in ("yes", "no"):
        return 1.0 if pred.split()[:1] == [gold] else 0.0
    return 1.0 if gold == pred or f" {gold} " in f" {pred} " else 0.0


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float | None]) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def score_question(evidence: Sequence[str], answer: str, qtype: str, sessions: Sequence[str],
                   texts: Sequence[str], n_tokens: Sequence[int], latency_ms: float,
                   n_unknown_evidence: int = 0) -> dict:
    """Per-question record. ``n_unknown_evidence`` evidence items that name no corpus session
    count as missed (they lower recall and make all-evidence 0)."""
    wanted = list(dict.fromkeys(evidence))
    n_wanted = len(wanted) + n_unknown_evidence
    if n_wanted:
        hit = len(set(wanted) & set(sessions))
        recall = hit / n_wanted
        every = 1.0 if hit == n_wanted else 0.0
    else:
        recall = every = None
    return {
        "type": qtype,
        "recall": recall,
        "all_evidence": every,
        "answer_in_context": answer_in_context(answer, texts) if qtype == "Single" else None,
        "context_tokens": int(sum(n_tokens)),
        "latency_ms": float(latency_ms),
        "n_chunks": len(sessions),
    }


def aggregate(records: Sequence[dict]) -> dict:
    """Means over the records where a metric applies (percent), tokens, latency p50/p95 (ms)."""
    def pct(key):
        m = mean(r[key] for r in records)
        return None if m is None else 100.0 * m

    lat = [r["latency_ms"] for r in records]
    return {
        "n": len(records),
        "n_recall": sum(r["recall"] is not None for r in records),
        "n_answer": sum(r["answer_in_context"] is not None for r in records),
        "recall@5": pct("recall"),
        "all_evidence@5": pct("all_evidence"),
        "answer_in_context@5": pct("answer_in_context"),
        "context_tokens": mean(r["context_tokens"] for r in records),
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
    }


def aggregate_by_type(records: Sequence[dict], types: Sequence[str] = ("Single", "Multi", "Null")) -> dict:
    out = {"overall": aggregate(records)}
    for t in types:
        sub = [r for r in records if r["type"] == t]
        if sub:
            out[t] = aggregate(sub)
    return out
