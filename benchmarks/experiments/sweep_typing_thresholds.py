"""The sweep behind the entity typer's thresholds (``MIN_SIMILARITY``, ``MARGIN`` and
``CONTRADICTION`` in ``minirag_core.extraction.entity_typing``): precision and coverage of the
offline extractor's types on the labelled sample (``benchmarks/quality/typing_sample.json``),
chosen on its tune half (even positions) and reported on its test half (odd positions).

    python -m benchmarks.experiments.sweep_typing_thresholds

The chosen setting is the one of highest tune coverage whose tune precision is at least 0.9
(ties: higher precision, then the more cautious: larger margin, higher similarity, smaller
contradiction; where none reaches 0.9, the one of highest tune precision). Rows reaching 0.9
on the tune half are printed first."""

from __future__ import annotations

import itertools
import json

from benchmarks.quality import typing_precision as tp

MIN_SIMILARITIES = (0.4, 0.45, 0.5, 0.55, 0.6)
MARGINS = (0.0, 0.05, 0.1, 0.15)
CONTRADICTIONS = (0.0, 0.02, 0.05, 0.1, 1.0)
TARGET = 0.9


def main() -> None:
    sample = json.loads(tp.SAMPLE.read_text(encoding="utf-8"))
    extractor = tp._extractor()
    typer = extractor.typer
    read = tp.read_sample(sample, extractor)
    halves = {e["chunk"] + "\x00" + e["name"] + "\x00" + str(i): ("tune" if i % 2 == 0 else "test")
              for i, e in enumerate(sample["entities"])}
    rows_out = []
    for sim, margin, contra in itertools.product(MIN_SIMILARITIES, MARGINS, CONTRADICTIONS):
        typer.min_similarity, typer.margin, typer.contradiction = sim, margin, contra
        rows = tp.retype(sample, extractor, read)
        split = {"tune": [], "test": []}
        for i, row in enumerate(rows):
            split[halves[row[0]["chunk"] + "\x00" + row[0]["name"] + "\x00" + str(i)]].append(row)
        tune, test = tp.score(split["tune"]), tp.score(split["test"])
        rows_out.append((sim, margin, contra, tune, test))
    ok = [r for r in rows_out if r[3].precision >= TARGET]
    best = max(ok, key=lambda r: (r[3].coverage, r[3].precision, r[1], r[0], -r[2])) if ok else \
        max(rows_out, key=lambda r: (r[3].precision, r[3].coverage))
    print(f"{'min_sim':>7} {'margin':>6} {'contra':>6} {'tune P':>7} {'tune C':>7} {'test P':>7} {'test C':>7}")
    for r in sorted(ok, key=lambda r: (-r[3].coverage, -r[3].precision)) + \
            sorted(rows_out, key=lambda r: (-r[3].coverage, -r[3].precision))[:10]:
        print(f"{r[0]:>7} {r[1]:>6} {r[2]:>6} {r[3].precision:>7.1%} {r[3].coverage:>7.1%} "
              f"{r[4].precision:>7.1%} {r[4].coverage:>7.1%}{'  <- chosen' if r is best else ''}")
    print("chosen:", best[:3], f"test precision {best[4].precision:.1%}, coverage {best[4].coverage:.1%}")


if __name__ == "__main__":
    main()
