"""The embedded default extractor: entities and relations without any language model.

Each chunk's format is read from its shape (:mod:`.formats`). Prose, headed and encyclopedic
text goes through spaCy's small English pipeline (:mod:`.nlp`): its named entities are typed
from their labels, and dependency links between entities ("A directed B", "born in") become
relations with the predicate as keywords and the sentence as description. Chat transcripts
are read by their speaker lines (speakers are PERSON entities) with rules only, which is
fast and suits short casual turns. Every format also gets the rule-based spans of
:mod:`.spans` (quoted titles, dates, capitalised runs, key noun phrases); names the
recogniser leaves untyped are typed zero-shot by :class:`~minirag_core.extraction.entity_typing.EntityTyper`.
Co-occurrence in one sentence stays as a weaker relation. A chunk's subject (its title line or
heading) is recorded for bridge retrieval.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from typing import Iterable, Sequence

from minirag_core.extraction import entity_typing

from minirag_core.graph import names

from minirag_core.extraction import temporal
from minirag_core.extraction.entity_typing import (
    DATE_TIME, LOCATION, PERSON, WORK_OF_ART, EntityTyper, is_full_name, new_typer, rule_type,
)
from minirag_core.types import UNKNOWN_TYPE, Chunk, ExtractedEntity, ExtractedRelation, ExtractionResult
from minirag_core.extraction.chunk_reader import (
    MAX_DESCRIPTION, ChunkEntities, Sentence, add_chat_structure, add_subject, read_sentences, trim,
)
from minirag_core.extraction.formats import CHAT, chunk_format, parse_messages, prose_lines, split_camel_name, split_sentences
from minirag_core.extraction import chunk_reader, formats, nlp, spans, subjects, wordlists
from minirag_core.extraction import code_names, markdown, markdown_entities, page_structure, restructuredtext, scripts
from minirag_core.extraction.markdown_entities import add_markdown, is_markdown_chunk, read_chunk, sentence_parts
from minirag_core.extraction.identity import digest, module_digest
from minirag_core.extraction.nlp import model_identity, parse
from minirag_core.extraction.spans import find_capitalised, find_dates, find_noun_phrases, find_quoted
from minirag_core.extraction.subjects import subject_names

_GENERIC = ("conversation", "session time", "co-occurrence")
_PAGE = "markdown page"
#: the modules whose code and constants decide what the extractor returns
_RULE_MODULES = (chunk_reader, formats, nlp, spans, subjects, wordlists, entity_typing, names, temporal, markdown,
                 markdown_entities, page_structure, restructuredtext, code_names, scripts)


class OfflineExtractor:
    """Named entities, dependency relations and rules, plus zero-shot typing (no LLM).

    ``ner=False`` reads every format with rules only (no spaCy); ``chat_ner=True`` also runs
    the recogniser (without the parser) over chat messages. ``day_first`` reads an ambiguous
    numeric date (03/04/2026) day first (default: :data:`~minirag_core.extraction.temporal.DAY_FIRST`).
    """

    name = "offline"

    def __init__(self, embedder=None, *, typer: EntityTyper | None = None, use_context: bool = False,
                 session_entities: bool = True, ner: bool = True, chat_ner: bool = False,
                 day_first: bool | None = None) -> None:
        self._embedder = embedder
        self._typer = typer
        self.use_context = use_context
        self.session_entities = session_entities
        self.ner = ner
        self.chat_ner = chat_ner
        self.day_first = temporal.DAY_FIRST if day_first is None else day_first

    @property
    def typer(self) -> EntityTyper:
        if self._typer is None:
            self._typer = new_typer(self._embedder)
        return self._typer

    @property
    def identity(self) -> str:
        """The extraction cache's key: a digest of the rules, word lists and typing prototypes
        (code and data as loaded now), the spaCy model, the embedding model and the settings."""
        rules = [module_digest(m) for m in (*_RULE_MODULES, sys.modules[__name__])]
        typer = self.typer
        typing = typer.settings
        settings = [self.use_context, self.session_entities, self.ner, self.chat_ner, self.day_first]
        model = model_identity() if self.ner or self.chat_ner else None
        embedding = [typer.embedder.name, getattr(typer.embedder, "precision", None)]
        return f"{self.name}:{digest([rules, model, embedding, typing, settings])}"

    # -- per chunk, no typing --
    def _read_chunks(self, chunks: Sequence[Chunk]) -> list[ChunkEntities]:
        """Every chunk's entities; spaCy runs once over all prose lines of the batch."""
        plans: list[tuple[str, list, list[Sentence]]] = []
        lines: list[str] = []
        chat_sentences: list[Sentence] = []
        for chunk in chunks:
            fmt = chunk_format(chunk.text, chunk.metadata)
            if self.ner and fmt != CHAT and is_markdown_chunk(chunk.metadata):  # read by its structure
                page = read_chunk(chunk.text, chunk.doc_id, chunk.metadata)
                own = [unit.text for unit in page.prose]
                plans.append((_PAGE, [len(lines), len(own), page], []))
                lines += own
            elif fmt == CHAT or not self.ner:
                messages, when = parse_messages(chunk.text)
                sents = [Sentence(t, m.speaker) for m in messages for t in m.sentences]
                if fmt == CHAT and self.chat_ner:
                    chat_sentences += sents
                plans.append((fmt, [messages, when], sents))
            else:
                own = prose_lines(chunk.text, fmt)
                plans.append((fmt, [len(lines), len(own)], []))
                lines += own
        docs = parse(lines) if lines else []
        chat_docs = parse([s.text for s in chat_sentences], parser=False) if chat_sentences else []
        for s, doc in zip(chat_sentences, chat_docs):
            s.parsed = doc[:]
        out = []
        for chunk, (fmt, info, sents) in zip(chunks, plans):
            if fmt == _PAGE:
                start, n, page = info
                pairs = [(Sentence(sent.text, None, sent, code=code, links=links), unit)
                         for unit, doc in zip(page.prose, docs[start:start + n]) for sent in doc.sents
                         for code, links in [sentence_parts(unit, sent.start_char, sent.end_char)]]
                ce = read_sentences([s for s, _ in pairs], [], prose=True, day_first=self.day_first)
                add_markdown(ce, chunk.doc_id, page, pairs)
                out.append(ce)
                continue
            if fmt == CHAT or not self.ner:
                messages, when = info
                speakers = [m.speaker for m in messages if m.speaker]
                ce = read_sentences(sents, speakers, prose=False, day_first=self.day_first)
                add_chat_structure(ce, messages, when, speakers, session_entities=self.session_entities)
            else:
                start, n = info
                sents = [Sentence(sent.text, None, sent) for doc in docs[start:start + n] for sent in doc.sents]
                ce = read_sentences(sents, [], prose=True, day_first=self.day_first)
            add_subject(chunk, ce)
            out.append(ce)
        return out

    def _read_chunk(self, chunk: Chunk) -> ChunkEntities:
        return self._read_chunks([chunk])[0]

    def _build(self, ce: ChunkEntities, types: dict[str, str | None]) -> ExtractionResult:
        entities = [
            ExtractedEntity(name=display, type=types.get(key) or UNKNOWN_TYPE,
                            description=trim(" ".join(ce.sentences.get(key, [])) or display, MAX_DESCRIPTION))
            for key, display in ce.names.items()
        ]
        relations = []
        for (a, b), rec in ce.relations.items():
            if a not in ce.names or b not in ce.names:
                continue
            source, target = rec.direction or (a, b)
            keywords = [k for k in rec.keywords if k not in _GENERIC] + [k for k in _GENERIC if k in rec.keywords]
            relations.append(ExtractedRelation(
                source=ce.names[source], target=ce.names[target],
                description=trim(" ".join(rec.link_descs + rec.other_descs), MAX_DESCRIPTION),
                keywords=", ".join(keywords), weight=float(rec.weight)))
        keywords = [k for k, _ in ce.keywords.most_common(10)]
        subjects = [ce.names[k] for k in ce.subjects if k in ce.names] if ce.subjects else \
            subject_names(ce.subject, ce.names) if ce.subject else []
        return ExtractionResult(entities=entities, relations=relations, content_keywords=keywords,
                                subject_entities=subjects)

    def _cues(self, read: list[ChunkEntities]) -> dict[str, tuple[str, str | None, bool]]:
        """key -> (display, the type its spans suggest or None, whether that type is sure) for
        every name whose type no chunk-local structure gives: a date pattern or a place cue
        ("at X", "moved to X"; sure), else the recogniser's majority label or a quoted title."""
        votes: dict[str, Counter] = {}
        for ce in read:
            for key, counts in ce.ner_votes.items():
                votes.setdefault(key, Counter()).update(counts)
        cues: dict[str, tuple[str, str | None, bool]] = {}
        for ce in read:
            for key, display in ce.names.items():
                if key in cues or key in ce.persons or key in ce.structural_types or ce.kinds.get(key) == "code":
                    continue
                kind = ce.kinds.get(key)
                if kind == "date":
                    cues[key] = (display, DATE_TIME, True)
                elif key in votes:
                    cues[key] = (display, votes[key].most_common(1)[0][0], False)
                elif key in ce.places and rule_type(display) in (None, LOCATION):
                    cues[key] = (display, LOCATION, True)
                else:
                    cues[key] = (display, rule_type(display) or WORK_OF_ART if kind == "quoted" else None, False)
        return cues

    def _types(self, read: list[ChunkEntities]) -> dict[str, str | None]:
        """A type or None for every distinct name no chunk-local structure types: a cue's type
        unless the classifier clearly prefers another, else a rule or a confident classifier. A
        lone name the recogniser calls PERSON stands when it is the surname of a full name typed
        PERSON (the short form the graph homes at that full name)."""
        cues = self._cues(read)
        types: dict[str, str | None] = {k: cue for k, (_, cue, sure) in cues.items() if sure}
        cued = [k for k, (_, cue, sure) in cues.items() if cue and not sure]
        for key, ok in zip(cued, self.typer.confirmed([cues[k][0] for k in cued], [cues[k][1] for k in cued])):
            if ok:
                types[key] = cues[key][1]
        fulls = [ce.names[k] for ce in read for k in ce.persons] + [cues[k][0] for k, t in types.items() if t == PERSON]
        surnames = {names.normalize_entity_name(n.split()[-1]) for n in fulls if is_full_name(n)}
        types.update({k: PERSON for k in cued if k not in types and cues[k][1] == PERSON and k in surnames})
        pending = [k for k in cues if k not in types]
        if pending:
            contexts = None
            if self.use_context:
                first = {k: (ce.sentences.get(k) or [None])[0] for ce in reversed(read) for k in ce.names}
                contexts = [first.get(k) for k in pending]
            types.update(zip(pending, self.typer.type_of([cues[k][0] for k in pending], contexts)))
        return types

    def extract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]:
        batches: Iterable[int] = range(0, len(chunks), 256)
        if show_progress:
            try:
                from tqdm import tqdm

                batches = tqdm(batches, desc="offline extraction", unit="batch")
            except ImportError:  # pragma: no cover
                pass
        read: list[ChunkEntities] = []
        for start in batches:
            read += self._read_chunks(chunks[start:start + 256])
        return self.results(read)

    def results(self, read: list[ChunkEntities]) -> list[ExtractionResult]:
        """The typed entities and relations of chunks already read (typing is corpus-wide)."""
        types = self._types(read)
        results = []
        for ce in read:
            local = {k: ce.structural_types.get(k) or (code_names.code_kind(ce.names[k]) if ce.kinds.get(k) == "code"
                        else PERSON if k in ce.persons else types.get(k)) for k in ce.names}
            results.append(self._build(ce, local))
        return results

    async def aextract(self, chunks: Sequence[Chunk], *, show_progress: bool = False) -> list[ExtractionResult]:
        return await asyncio.to_thread(self.extract, chunks, show_progress=show_progress)


__all__ = ["OfflineExtractor", "parse_messages", "split_camel_name",
           "find_dates", "find_quoted", "find_capitalised", "find_noun_phrases", "split_sentences"]
