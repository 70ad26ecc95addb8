"""Scoring a model's free-text answers: gold-in-reply after normalisation (the paper's judge
checks the same with GPT-4o), SQuAD token F1, and bootstrap 95% intervals of a mean."""

from __future__ import annotations

import random
from collections import Counter
from typing import Sequence

from benchmarks.quality.metrics import normalise_answer, normalised_match


def answer_correct(reply: str, answers: Sequence[str]) -> float:
    """1 if the gold answer or an alias occurs in the reply after normalisation, else 0."""
    return max((normalised_match(reply, a) for a in answers if normalise_answer(a)), default=0.0)


def token_f1(reply: str, answers: Sequence[str]) -> float:
    """The best SQuAD token F1 of the reply against the gold answer and its aliases."""
    best = 0.0
    pred = normalise_answer(reply).split()
    for answer in answers:
        gold = normalise_answer(answer).split()
        common = sum((Counter(pred) & Counter(gold)).values())
        if common:
            precision, recall = common / len(pred), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def bootstrap_ci(values: Sequence[float], samples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of the mean (None for no values)."""
    if not values:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(samples))
    return means[int(0.025 * samples)], means[min(samples - 1, int(0.975 * samples))]


def rate_with_ci(rate: float | None, ci: tuple[float, float] | None, signed: bool = False) -> str:
    """A share as a percentage with its 95% interval, "12.5 [4, 25]" ("-" for no value); ``signed``
    for a difference of shares ("+4.2 [-8, +17]")."""
    if rate is None:
        return "-"
    sign = "+" if signed else ""
    bounds = f" [{100 * ci[0]:{sign}.0f}, {100 * ci[1]:{sign}.0f}]" if ci else ""
    return f"{100 * rate:{sign}.1f}{bounds}"
