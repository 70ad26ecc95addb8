"""Precision and coverage of the offline extractor's entity types on a hand-labelled sample.

``typing_sample.json`` holds the chunks (text and metadata, so they re-extract exactly) and
entities drawn from them with a seeded random draw over a few dozen documents of each
development set, each with the type a reader gave it from its chunk (``gold``: a type of the
project's set, or null for "none of these"). This script re-extracts the sample's chunks with
the current offline extractor (one batch per set) and compares the types it gives:

- precision: share of typed entities whose type equals gold (an entity whose gold is null
  counts as wrong when typed);
- coverage: share of entities that got a type.

    python -m benchmarks.quality.typing_precision            # report, overall and per set
    python -m benchmarks.quality.typing_precision --draw 56  # draw a new unlabelled sample

The stored sample: 336 entities, 56 from each of six sets (seed 44), labelled by reading each
chunk. Nearest-type typing that never abstained scored 48.2 % precision at 100 % coverage;
typing that abstains when unsure (thresholds: ``benchmarks/experiments/sweep_typing_thresholds.py``)
scores 91.1 % at 47.0 % (lihuaworld 100 %, hotpotqa_100 92.6 %, musique_50 92.0 %,
pydantic_docs 91.4 %, scrapy_docs 85.0 %, uv_docs 84.6 %).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minirag_core.types import UNKNOWN_TYPE, Chunk

SAMPLE = Path(__file__).with_name("typing_sample.json")
SETS = ("lihuaworld", "hotpotqa_100", "musique_50", "pydantic_docs", "uv_docs", "scrapy_docs")
SEED = 44
#: documents drawn per set (a page of a documentation site holds many chunks)
DOCS_PER_SET = {"lihuaworld": 16, "hotpotqa_100": 30, "musique_50": 30}
DOCS_PER_SITE = 10
EXCERPT = 320


@dataclass(frozen=True)
class Score:
    entities: int
    typed: int
    correct: int

    @property
    def precision(self) -> float:
        return self.correct / self.typed if self.typed else 1.0

    @property
    def coverage(self) -> float:
        return self.typed / self.entities if self.entities else 0.0


def _extractor():
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder
    from minirag_core.extraction.offline_extractor import OfflineExtractor

    return OfflineExtractor(SentenceTransformerEmbedder())


def _chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(id=row["id"], doc_id=row["doc_id"], order=row["order"], text=row["text"], n_tokens=0,
                 metadata=row["metadata"])


def typed_entities(chunks: list[Chunk], results: list) -> dict[tuple[str, str], str]:
    """(chunk id, entity name) -> the type the extractor gave it ("" for none)."""
    out: dict[tuple[str, str], str] = {}
    for chunk, result in zip(chunks, results):
        for entity in result.entities:
            kind = entity.type.strip().upper()
            out[(chunk.id, entity.name)] = "" if kind == UNKNOWN_TYPE else kind
    return out


def read_sample(sample: dict[str, Any], extractor) -> list[tuple[list[Chunk], list]]:
    """The sample's chunks of each set with what the extractor reads in them (before typing)."""
    by_set: dict[str, list[Chunk]] = defaultdict(list)
    for row in sample["chunks"]:
        by_set[row["set"]].append(_chunk(row))
    return [(chunks, extractor._read_chunks(chunks)) for chunks in by_set.values()]


def retype(sample: dict[str, Any], extractor=None, read: list[tuple[list[Chunk], list]] | None = None
           ) -> list[tuple[dict[str, Any], str]]:
    """Every labelled entity of the sample with the type the current extractor gives it
    (``read``: ``read_sample``'s result, to type again without parsing again)."""
    extractor = extractor or _extractor()
    types: dict[tuple[str, str], str] = {}
    for chunks, chunk_reads in read or read_sample(sample, extractor):
        types.update(typed_entities(chunks, extractor.results(chunk_reads)))
    return [(e, types.get((e["chunk"], e["name"]), "")) for e in sample["entities"] if "gold" in e]


def score(rows: list[tuple[dict[str, Any], str]]) -> Score:
    typed = [(e, t) for e, t in rows if t]
    return Score(len(rows), len(typed), sum(1 for e, t in typed if t == e["gold"]))


def report(rows: list[tuple[dict[str, Any], str]]) -> dict[str, Score]:
    """Scores overall (key ``all``) and per set."""
    sets = sorted({e["set"] for e, _ in rows})
    return {"all": score(rows), **{s: score([(e, t) for e, t in rows if e["set"] == s]) for s in sets}}


def _excerpt(text: str, name: str) -> str:
    m = re.search(re.escape(name), text, re.I)
    at = m.start() if m else 0
    start = max(0, at - EXCERPT // 2)
    return re.sub(r"\s+", " ", text[start:start + EXCERPT]).strip()


def draw(per_set: int, root: Path | None = None) -> dict[str, Any]:
    """A fresh unlabelled sample: ``per_set`` entities of each set, from a seeded draw of its
    documents, chunked as an index chunks them and read by the offline extractor."""
    from benchmarks.quality import devsets
    from minirag_core.indexing.chunking import iter_chunks

    extractor = _extractor()
    embedder = extractor.typer.embedder
    rng = random.Random(SEED)
    chunks_out: list[dict[str, Any]] = []
    entities: list[dict[str, Any]] = []
    for name in SETS:
        data = devsets.load(name, root or devsets.DATA_ROOT)
        docs = rng.sample(data.documents, min(len(data.documents), DOCS_PER_SET.get(name, DOCS_PER_SITE)))
        chunks = [c for d in docs for c in iter_chunks(d, embedder)]
        found = typed_entities(chunks, extractor.extract(chunks))
        text = {c.id: c for c in chunks}
        picked = rng.sample(sorted(found), min(per_set, len(found)))
        for chunk_id, entity in sorted(picked):
            chunk = text[chunk_id]
            entities.append({"name": entity, "set": name, "doc_id": chunk.doc_id, "chunk": chunk_id,
                             "excerpt": _excerpt(chunk.text, entity)})
        used = {c for c, _ in picked}
        chunks_out += [{"id": c.id, "set": name, "doc_id": c.doc_id, "order": c.order, "text": c.text,
                        "metadata": c.metadata} for c in chunks if c.id in used]
    return {"seed": SEED, "chunks": chunks_out, "entities": entities}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--draw", type=int, metavar="PER_SET", help="draw a new unlabelled sample to --sample")
    args = parser.parse_args(argv)
    if args.draw:
        args.sample.write_text(json.dumps(draw(args.draw), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    rows = retype(json.loads(args.sample.read_text(encoding="utf-8")))
    print(f"{'set':<14} {'entities':>8} {'typed':>6} {'precision':>9} {'coverage':>8}")
    for name, s in report(rows).items():
        print(f"{name:<14} {s.entities:>8} {s.typed:>6} {s.precision:>9.1%} {s.coverage:>8.1%}")


if __name__ == "__main__":
    main()
