"""Synthetic corpora of any size from the development sets, for the scale benchmark.

Replica 0 is the original passages; replica ``r > 0`` of a passage has every capitalised
word perturbed with a replica-specific suffix and its id suffixed, so that replicas add
distinct entities instead of collapsing onto the originals' nodes.
"""

from __future__ import annotations

import re
import time
import string
from dataclasses import replace

from minirag_core.types import Document, ExtractedEntity, ExtractedRelation, ExtractionResult

from benchmarks.quality.devsets import Dataset, Question, load

CAPITALISED = re.compile(r"\b([A-Z][a-z]{2,})\b")
DEFAULT_SETS = ("hotpotqa_100", "musique_50")


def replica_suffix(replica: int) -> str:
    """A short lower-case syllable unique to the replica (``""`` for the original)."""
    if replica == 0:
        return ""
    letters = string.ascii_lowercase
    out = ""
    n = replica
    while n:
        n, rest = divmod(n - 1, 26)
        out = letters[rest] + out
    return "q" + out  # "qa", "qb", ...: rare in real names, so replicas never meet the originals


def perturb(text: str, replica: int) -> str:
    suffix = replica_suffix(replica)
    return text if not suffix else CAPITALISED.sub(lambda m: m.group(1) + suffix, text)


def base_passages(sets: tuple[str, ...] = DEFAULT_SETS) -> tuple[list[Document], list[Question]]:
    """The passages of the given sets (ids prefixed with the set) and their test-half questions."""
    docs: list[Document] = []
    questions: list[Question] = []
    for name in sets:
        data: Dataset = load(name)
        docs.extend(Document(f"{name}/{d.id}", d.text, {"source": f"{name}/{d.id}"}) for d in data.documents)
        questions.extend(replace(q, evidence=tuple(f"{name}/{e}" for e in q.evidence)) for q in data.half("test"))
    return docs, questions


def scaled_corpus(size: int, base: list[Document]) -> list[Document]:
    """``size`` documents: the originals first, then perturbed replicas in order."""
    out: list[Document] = []
    replica = 0
    while len(out) < size:
        for doc in base:
            if len(out) >= size:
                break
            doc_id = doc.id if replica == 0 else f"{doc.id}~r{replica}"
            out.append(Document(doc_id, perturb(doc.text, replica), {"source": doc_id, "replica": replica}))
        replica += 1
    return out


def pick_questions(questions: list[Question], n: int) -> list[Question]:
    """``n`` questions, alternating between the sets (their ids keep the set apart)."""
    by_set: dict[str, list[Question]] = {}
    for q in questions:
        by_set.setdefault(q.evidence[0].split("/")[0] if q.evidence else "", []).append(q)
    groups = list(by_set.values())
    picked: list[Question] = []
    i = 0
    while len(picked) < n and any(i < len(g) for g in groups):
        picked.extend(g[i] for g in groups if i < len(g))
        i += 1
    return picked[:n]


REPLICA_ID = re.compile(r"^(.*)~r(\d+)$")


def _perturbed(result: ExtractionResult, replica: int) -> ExtractionResult:
    p = lambda text: perturb(text, replica)  # noqa: E731
    return ExtractionResult(
        entities=[ExtractedEntity(p(e.name), e.type, p(e.description)) for e in result.entities],
        relations=[ExtractedRelation(p(r.source), p(r.target), p(r.description), r.keywords, r.weight)
                   for r in result.relations],
        content_keywords=[p(k) for k in result.content_keywords], unparsed_records=result.unparsed_records,
        subject_entities=[p(s) for s in result.subject_entities])


class ReplicaExtractor:
    """Wraps an extractor: a replica chunk whose text is its original's, perturbed, gets the
    original's extraction, perturbed the same way (the extractor runs on originals only).

    For timing everything but extraction at sizes whose extraction would take hours; the graph
    has the shape a real run would give (names differ per replica exactly as in the text)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self._seen: dict[tuple[str, int], tuple[str, ExtractionResult]] = {}
        self.reused = 0

    def extract(self, chunks, *, show_progress: bool = False) -> list[ExtractionResult]:
        out: dict[int, ExtractionResult] = {}
        todo = []
        for i, chunk in enumerate(chunks):
            match = REPLICA_ID.match(chunk.doc_id)
            base = self._seen.get((match.group(1), chunk.order)) if match else None
            if match and base is not None and perturb(base[0], int(match.group(2))) == chunk.text:
                out[i] = _perturbed(base[1], int(match.group(2)))
                self.reused += 1
            else:
                todo.append(i)
        found = self.inner.extract([chunks[i] for i in todo]) if todo else []
        for i, result in zip(todo, found):
            out[i] = result
            if not REPLICA_ID.match(chunks[i].doc_id):
                self._seen[(chunks[i].doc_id, chunks[i].order)] = (chunks[i].text, result)
        return [out[i] for i in range(len(chunks))]

    async def aextract(self, chunks, *, show_progress: bool = False) -> list[ExtractionResult]:
        return self.extract(chunks)

    def seen(self, chunk) -> ExtractionResult:
        """The remembered extraction of an original ``chunk`` (``KeyError`` if not seen)."""
        text, result = self._seen[(chunk.doc_id, chunk.order)]
        if text != chunk.text:
            raise KeyError(f"{chunk.doc_id}#{chunk.order} changed since it was remembered")
        return result

    def remember(self, index, originals: list[Document]) -> None:
        """Learn the originals' extractions from ``index``'s extraction cache (a resumed build
        has indexed them already), extracting only those the cache lacks."""
        from minirag_core.indexing.cached_extraction import extract_cached
        from minirag_core.indexing.chunking import iter_chunks

        chunks = [c for d in originals for c in iter_chunks(d, index.embedder, chunk_tokens=index.chunk_tokens,
                                                             overlap_tokens=index.chunk_overlap)]
        for chunk, result in zip(chunks, extract_cached(self.inner, index.extraction_cache, chunks)):
            if result is not None:
                self._seen[(chunk.doc_id, chunk.order)] = (chunk.text, result)


class TimedExtractor:
    """Wraps an extractor and adds up the seconds spent in it (``seconds``) and, of those, the
    seconds ``embedder`` (anything with a running ``seconds`` total) spent inside it."""

    def __init__(self, inner, embedder=None) -> None:
        self.inner = inner
        self.name = inner.name
        self.embedder = embedder
        self.seconds = 0.0
        self.embedding_seconds = 0.0

    def extract(self, chunks, *, show_progress: bool = False) -> list[ExtractionResult]:
        t = time.perf_counter()
        embedding = self.embedder.seconds if self.embedder is not None else 0.0
        try:
            return list(self.inner.extract(chunks))
        finally:
            self.seconds += time.perf_counter() - t
            if self.embedder is not None:
                self.embedding_seconds += self.embedder.seconds - embedding

    async def aextract(self, chunks, *, show_progress: bool = False) -> list[ExtractionResult]:
        return self.extract(chunks)
