"""Fast deterministic stand-ins for the embedding model, the extractor and the query mapper."""

from __future__ import annotations

import hashlib
import re

import numpy as np

WORD = re.compile(r"\S+")

from minirag_core.types import ExtractedEntity, ExtractedRelation, ExtractionResult, QueryMapping


class HashEmbedder:
    """Deterministic bag-of-words vectors (three hashed buckets per word): instant, texts sharing
    words are similar, and two different names share at most a third of their vector."""

    name, dim, max_tokens = "hash-bow:v1", 256, 100_000

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                for part in range(3):
                    out[row, int.from_bytes(digest[2 * part:2 * part + 2], "little") % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def count_tokens(self, text):
        return len(WORD.findall(text))

    def token_windows(self, text, size, overlap):
        return [text] if text.strip() else []


class NameListExtractor:
    """Every numbered name is an entity; consecutive ones co-occur (no relation vectors, as
    with the offline extractor)."""

    name = "name-list:v1"

    def extract(self, chunks, *, show_progress=False):
        results = []
        for chunk in chunks:
            names = list(dict.fromkeys(re.findall(r"\b[A-Z][a-z]+\d+\b", chunk.text)))
            entities = [ExtractedEntity(n, "PERSON", f"{n} appears in {chunk.doc_id}") for n in names]
            relations = [ExtractedRelation(a, b, f"{a} works with {b}", "co-occurrence")
                         for a, b in zip(names, names[1:])]
            results.append(ExtractionResult(entities=entities, relations=relations, subject_entities=names[:1]))
        return results

    async def aextract(self, chunks, *, show_progress=False):
        return self.extract(chunks)


class NameMapper:
    def map_query(self, query, type_pool):
        return QueryMapping(entities=re.findall(r"\b[A-Z][a-z]+\d+\b", query), answer_types=["PERSON"],
                            source="offline")

    async def amap_query(self, query, type_pool):
        return self.map_query(query, type_pool)
