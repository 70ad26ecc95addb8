"""A conversation over one index: related questions asked one after another reuse what earlier
turns found, after AutoPrunedRetriever.

A :class:`MiniRAGSession` keeps the reasoning subgraph of its earlier turns (entity and edge ids
with a usefulness score, never text) and the passages and graph rows the model was already sent.
Each turn:

- a follow-up that refers back with a pronoun before naming anything ("when did *he* join?"), or
  asks about nothing its query mapping can name ("and in which year?"), takes query entities from
  the previous turn: that turn's query entities and answer entities, the most useful first;
- the context sends new chunks in full and earlier ones by reference (``[see passage 3 above]``),
  and leaves out graph rows that tell nothing new: an answer candidate or a relationship an
  earlier turn sent, a path all of whose steps it sent;
- a follow-up sends a chunk not sent before only when it scores near the turn's best
  (``admit_ratio``, default 0.7; ``new_chunks`` caps their number), and only the graph rows of the
  chunks it sends in full (``rows_of_new_chunks``): ``retrieval/session_delta.py``;
- a passage sent in full shows the runs of lines a passage above it already sent as a marker
  naming that passage (``skip_repeated_lines``): ``retrieval/session_text.py``.

The session is bounded (``max_entities``, ``max_edges``, ``max_passages``: the least useful
structure is pruned first), serialisable (:meth:`MiniRAGSession.to_json` / :meth:`from_json`) and
only reads the index.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping

from minirag_core.context import ContextRows, render_rows, select_rows
from minirag_core.graph.aliases import PERSON
from minirag_core.retrieval.pipeline import check_mode
from minirag_core.retrieval.query.seeds import named_spans
from minirag_core.retrieval.session_delta import Admission, row_keys, unsent_rows
from minirag_core.retrieval.session_text import SentLines
from minirag_core.types import QueryMapping, RetrievalResult, ScoredChunk

if TYPE_CHECKING:
    from minirag_core.indexing.index import MiniRAGIndex

__all__ = ["MiniRAGSession", "SessionResult", "SessionTurn"]

#: words that refer back to someone named before, and to something named before: a question
#: holding one continues the last turn (with the entities of that kind, where there are some)
PERSON_WORDS = frozenset("he she him her his hers himself herself".split())
THING_WORDS = frozenset("it its itself".split())
REFERRING_WORDS = PERSON_WORDS | THING_WORDS | frozenset("they them their theirs themselves".split())
_WORD = re.compile(r"[A-Za-z']+")
FORMAT_VERSION = 1
#: a follow-up's new chunk is sent when it scores at least this share of the turn's best: chosen on
#: the tune halves' chains of five development sets (the largest share losing no all-evidence recall)
ADMIT_RATIO = 0.7


def referring_words(question: str) -> set[str]:
    """The words of :data:`REFERRING_WORDS` in ``question`` (lower case)."""
    return {w.lower() for w in _WORD.findall(question)} & REFERRING_WORDS


def refers_back(question: str) -> bool:
    """Whether ``question`` holds a personal pronoun (a word of :data:`REFERRING_WORDS`)."""
    return bool(referring_words(question))


def _of_the_kind(entities: list[str], types: Mapping[str, str], words: set[str]) -> list[str]:
    """The entities a pronoun can mean: people for "he"/"she", others for "it" (all when none is)."""
    if words & PERSON_WORDS and not words & THING_WORDS:
        kind = [e for e in entities if types.get(e) == PERSON]
    elif words & THING_WORDS and not words & PERSON_WORDS:
        kind = [e for e in entities if types.get(e) != PERSON]
    else:
        kind = []
    return kind or entities


@dataclass
class SessionTurn:
    """What one turn left in the session: ids only."""

    query: str
    query_entities: list[str]
    answer_entities: list[str]
    carried: list[str]
    passages: list[int]


@dataclass
class SessionResult:
    """One turn's retrieval and what of it is new to the model.

    ``result`` is the retrieval as the index returns it; ``passages`` numbers every chunk of it
    (numbers run over the whole session); ``new`` are the chunks sent in full this turn;
    ``rows`` the graph rows not sent before; ``carried`` the entity ids taken from earlier turns;
    ``texts`` a new chunk's text as sent (lines sent before as markers) where it differs."""

    result: RetrievalResult
    passages: dict[str, int]
    new: list[str]
    rows: ContextRows
    carried: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)

    def is_new(self, chunk_id: str) -> bool:
        return chunk_id in self.new

    def reference(self, chunk_id: str) -> str:
        """How the context points at a chunk sent in an earlier turn."""
        return f"[see passage {self.passages[chunk_id]} above]"

    def sent_text(self, chunk: ScoredChunk) -> str:
        """A new chunk's text as sent (lines sent before as markers)."""
        return self.texts.get(chunk.chunk_id, chunk.text)

    def shown_text(self, chunk: ScoredChunk) -> str:
        """A chunk as this turn shows it: a new one in full headed ``[passage N]``, an earlier one
        by reference."""
        if chunk.chunk_id in self.new:
            return f"[passage {self.passages[chunk.chunk_id]}]\n{self.sent_text(chunk)}"
        return self.reference(chunk.chunk_id)

    def shown_result(self) -> RetrievalResult:
        """A copy of ``result`` whose chunk texts are :meth:`shown_text` (for an adapter's documents)."""
        return replace(self.result, chunks=[replace(c, text=self.shown_text(c)) for c in self.result.chunks])

    def to_context(self) -> str:
        """The answer prompt's data tables: new chunks in full, earlier ones by reference, and
        only the graph rows no earlier turn sent."""
        fresh = set(self.new)
        rows = [(self.passages[c.chunk_id], c.doc_id, f"{c.score:.4f}",
                 self.sent_text(c) if c.chunk_id in fresh else self.reference(c.chunk_id))
                for c in self.result.chunks]
        return render_rows(self.rows, rows)


class MiniRAGSession:
    """Related questions over one index, each sent only what the model has not seen yet.

    ``carry_entities``: most entity ids a follow-up takes from the previous turn; ``decay``: the
    share of its usefulness an entity or edge keeps per turn it is not used again; ``new_chunks``:
    most chunks a follow-up sends in full (None: its whole top_k); ``admit_ratio``: a follow-up's
    chunk not sent before is sent only when its score is at least this share of the turn's best
    (None: no such bound); the places they leave go to the best-ranked chunks sent before (a
    reference each), so its tokens follow what is new. ``rows_of_new_chunks``: a follow-up sends
    only the graph rows touching an entity of a chunk it sends in full. ``skip_repeated_lines``: a
    passage sent in full shows runs of lines a passage above already sent as a marker naming it."""

    def __init__(self, index: "MiniRAGIndex", *, mode: str = "mini", max_entities: int = 256, max_edges: int = 512,
                 max_passages: int = 200, carry_entities: int = 4, decay: float = 0.5,
                 new_chunks: int | None = None, admit_ratio: float | None = ADMIT_RATIO,
                 rows_of_new_chunks: bool = True, skip_repeated_lines: bool = True) -> None:
        if min(max_entities, max_edges, max_passages) < 1 or carry_entities < 0 or not 0.0 <= decay <= 1.0:
            raise ValueError("max_entities, max_edges and max_passages must be at least 1, carry_entities at "
                             "least 0, decay between 0 and 1")
        self.admission = Admission(new_chunks, admit_ratio)
        self.rows_of_new_chunks = rows_of_new_chunks
        self.skip_repeated_lines = skip_repeated_lines
        self.sent_lines = SentLines()  # line hashes of the passages sent in full
        self.index = index
        self.mode = check_mode(mode)
        self.max_entities, self.max_edges, self.max_passages = max_entities, max_edges, max_passages
        self.carry_entities, self.decay = carry_entities, decay
        self.entities: dict[str, float] = {}  # entity id -> usefulness
        self.edges: dict[tuple[str, str], float] = {}  # (id, id), sorted -> usefulness
        self.passages: dict[str, tuple[int, int]] = {}  # chunk id -> (passage number, last turn shown)
        self.sent_rows: dict[tuple[str, ...], int] = {}  # graph row key -> last turn sent
        self.turns: list[SessionTurn] = []
        self.next_passage = 1

    # -- one turn ---------------------------------------------------------------------------------
    def follow_up_entities(self, question: str, mapping: QueryMapping | None) -> list[str]:
        """The entity ids ``question`` takes from the previous turn: none unless it refers back
        (a pronoun before it names anything: "when did *she* join X?", not "X failed, why did it?")
        or asks about nothing its query mapping could name ("and in which year?")."""
        if not self.turns:
            return []
        words = referring_words(question)
        if words:
            first = min(m.start() for m in _WORD.finditer(question) if m.group().lower() in words)
            if self._names_something(question[:first], mapping):
                return []
        elif mapping is None or mapping.entities or named_spans(self.index.sources, question):
            return []
        graph = self.index.graph_store
        last = self.turns[-1]
        found = {e: graph.entity(e) for e in dict.fromkeys(last.query_entities + last.answer_entities)}
        known = [e for e, attrs in found.items() if attrs is not None and e in self.entities]
        types = {e: str(found[e]["type"]).upper() for e in known}  # type: ignore[index]
        return sorted(_of_the_kind(known, types, words), key=lambda e: -self.entities[e])[: self.carry_entities]

    def _names_something(self, text: str, mapping: QueryMapping | None) -> bool:
        """Whether ``text`` names an entity node or one of the query mapping's entities."""
        lowered = text.lower()
        return bool(named_spans(self.index.sources, text)) or any(
            e.strip() and e.strip().lower() in lowered for e in (mapping.entities if mapping else []))

    def _prepared(self, question: str, mapping: QueryMapping | None) -> tuple[str, QueryMapping | None, list[str]]:
        carried = self.follow_up_entities(question, mapping)
        if not carried:
            return question, mapping, []
        names = [str((self.index.graph_store.entity(e) or {}).get("name", e)) for e in carried]
        if mapping is not None:
            mapping = replace(mapping, entities=[*mapping.entities, *names], query_vector=None, vector_model="")
        return f"{question} ({', '.join(names)})", mapping, carried

    def query(self, question: str, *, mode: str | None = None, **overrides: Any) -> SessionResult:
        """Retrieve for ``question`` as the next turn; ``overrides`` change ``RetrievalSettings``."""
        mode = check_mode(mode or self.mode)
        mapping = None if mode == "naive" else self.index.map_query(question)
        text, mapping, carried = self._prepared(question, mapping)
        k, deeper = self._depth(overrides)
        result = self.index.query_mapped(text, mapping, mode=mode, **deeper)
        return self._record(question, self._new_within_limit(result, k), carried)

    async def aquery(self, question: str, *, mode: str | None = None, **overrides: Any) -> SessionResult:
        mode = check_mode(mode or self.mode)
        mapping = None if mode == "naive" else await self.index.amap_query(question)
        text, mapping, carried = self._prepared(question, mapping)
        k, deeper = self._depth(overrides)
        result = await asyncio.to_thread(self.index.query_mapped, text, mapping, mode=mode, **deeper)
        return self._record(question, self._new_within_limit(result, k), carried)

    @property
    def new_chunks(self) -> int | None:
        """Most chunks a follow-up sends in full (the admission's bound)."""
        return self.admission.new_chunks

    @property
    def admit_ratio(self) -> float | None:
        """The share of the turn's best score a new chunk needs (the admission's bound)."""
        return self.admission.admit_ratio

    def _depth(self, overrides: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The turn's top_k, and the overrides to rank by: twice as deep when a follow-up's
        admission may pass over new chunks for ones sent before."""
        k = int(overrides.get("top_k") or self.index.settings.top_k)
        if not self.admission.bounded or not self.turns:
            return k, overrides
        return k, {**overrides, "top_k": 2 * k}

    def _new_within_limit(self, result: RetrievalResult, k: int) -> RetrievalResult:
        """A follow-up's chunks: the best ``k`` of ``result`` its admission keeps."""
        if self.turns:
            result.chunks = self.admission.select(result.chunks, self.passages, k)
        return result

    def _record(self, question: str, result: RetrievalResult, carried: list[str]) -> SessionResult:
        result.query = question
        turn = len(self.turns) + 1
        passages: dict[str, int] = {}
        new: list[str] = []
        texts: dict[str, str] = {}
        for chunk in result.chunks:
            if chunk.chunk_id in self.passages:
                number = self.passages[chunk.chunk_id][0]
            else:
                number, self.next_passage = self.next_passage, self.next_passage + 1
                new.append(chunk.chunk_id)
                if self.skip_repeated_lines:
                    shown = self.sent_lines.shown(chunk.text)
                    if shown != chunk.text:
                        texts[chunk.chunk_id] = shown
                    self.sent_lines.add(shown, number)
            passages[chunk.chunk_id] = number
            self.passages[chunk.chunk_id] = (number, turn)
        shown = select_rows(result)
        touching = None
        if self.rows_of_new_chunks and turn > 1:
            touching = {e for c in result.chunks if c.chunk_id in new for e in c.entities}
        fresh = unsent_rows(shown, self.sent_rows, touching)
        sent_now = row_keys(fresh) + [key for key in row_keys(shown) if key in self.sent_rows]
        self.sent_rows.update(dict.fromkeys(sent_now, turn))
        query_entities = self._query_entities(result) + [e for e in carried if e not in result.seeds]
        answer_entities = self._answer_entities(result, query_entities)
        self._grow(result, query_entities + answer_entities)
        self.turns.append(SessionTurn(question, query_entities, answer_entities, carried, sorted(passages.values())))
        self._prune()
        return SessionResult(result, passages, new, fresh, carried, texts)

    @staticmethod
    def _query_entities(result: RetrievalResult) -> list[str]:
        exact = [s for s, sim in result.seeds.items() if sim >= 1.0]
        return exact or sorted(result.seeds, key=lambda s: -result.seeds[s])[:3]

    @staticmethod
    def _answer_entities(result: RetrievalResult, query_entities: list[str]) -> list[str]:
        found = [c for c in result.answer_candidates if c not in query_entities][:3]
        if not found:  # no entity of a predicted answer type: where the strongest paths lead
            found = [p.nodes[-1] for p in result.ranked_paths() if p.nodes and p.nodes[-1] not in query_entities][:3]
        return list(dict.fromkeys(found))

    def _grow(self, result: RetrievalResult, named: list[str]) -> None:
        """Age what is kept, then add this turn's paths, key edges and entities by usefulness."""
        for store in (self.entities, self.edges):
            for key in store:
                store[key] *= self.decay
        paths = result.ranked_paths()
        top = max((p.weighted_score for p in paths), default=0.0) or 1.0
        for path in paths:
            for node in set(path.nodes):
                self.entities[node] = self.entities.get(node, 0.0) + path.weighted_score / top
            for u, v in zip(path.nodes, path.nodes[1:]):
                key = (min(u, v), max(u, v))
                self.edges[key] = self.edges.get(key, 0.0) + path.weighted_score / top
        best_edge = max((e.score for e in result.key_edges), default=0.0) or 1.0
        for edge in result.key_edges:
            key = (min(edge.source, edge.target), max(edge.source, edge.target))
            self.edges[key] = self.edges.get(key, 0.0) + edge.score / best_edge
        for chunk in result.chunks:
            for entity in chunk.entities:
                self.entities[entity] = self.entities.get(entity, 0.0) + 0.5
        for entity in named:
            self.entities[entity] = self.entities.get(entity, 0.0) + 1.0

    def _prune(self) -> None:
        """Keep the most useful entities, edges between kept entities, the latest passages and rows."""
        def most(store: Mapping[Any, float], n: int) -> list[Any]:
            return sorted(store, key=lambda k: (-store[k], k))[:n]

        self.entities = {e: self.entities[e] for e in most(self.entities, self.max_entities)}
        edges = {k: s for k, s in self.edges.items() if k[0] in self.entities and k[1] in self.entities}
        self.edges = {k: edges[k] for k in most(edges, self.max_edges)}
        latest = sorted(self.passages, key=lambda c: (-self.passages[c][1], self.passages[c][0]))
        self.passages = {c: self.passages[c] for c in latest[: self.max_passages]}
        self.sent_lines.forget({number for number, _ in self.passages.values()})
        rows = sorted(self.sent_rows, key=lambda k: (-self.sent_rows[k], k))
        self.sent_rows = {k: self.sent_rows[k] for k in rows[: self.max_edges]}

    # -- state ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The session as plain data (ids, scores and the turns' questions: no index text)."""
        return {"format": FORMAT_VERSION, "mode": self.mode,
                "limits": {"max_entities": self.max_entities, "max_edges": self.max_edges,
                           "max_passages": self.max_passages, "carry_entities": self.carry_entities,
                           "decay": self.decay, "new_chunks": self.new_chunks, "admit_ratio": self.admit_ratio,
                           "rows_of_new_chunks": self.rows_of_new_chunks,
                           "skip_repeated_lines": self.skip_repeated_lines},
                "entities": self.entities, "edges": [[u, v, s] for (u, v), s in self.edges.items()],
                "passages": {c: list(p) for c, p in self.passages.items()},
                "sent_rows": [[*k, t] for k, t in self.sent_rows.items()], "sent_lines": self.sent_lines.passages,
                "turns": [vars(t) for t in self.turns], "next_passage": self.next_passage}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, index: "MiniRAGIndex", data: Mapping[str, Any]) -> "MiniRAGSession":
        """A session saved by :meth:`to_dict` over ``index``; malformed data raises ``ValueError``."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT_VERSION:
            raise ValueError(f"not a saved session of format {FORMAT_VERSION}")
        try:
            # a session saved before follow-ups had an admission sent every new chunk, row and line
            limits = {"admit_ratio": None, "rows_of_new_chunks": False, "skip_repeated_lines": False,
                      **dict(data["limits"])}
            session = cls(index, mode=str(data["mode"]), **limits)
            session.entities = {str(e): float(s) for e, s in data["entities"].items()}
            session.edges = {(str(u), str(v)): float(s) for u, v, s in data["edges"]}
            session.passages = {str(c): (int(n), int(t)) for c, (n, t) in data["passages"].items()}
            session.sent_rows = {tuple(str(x) for x in row[:-1]): int(row[-1]) for row in data["sent_rows"]}
            session.turns = [SessionTurn(**t) for t in data["turns"]]
            session.next_passage = int(data["next_passage"])
            sent_lines = data.get("sent_lines", {})
            session.sent_lines = SentLines({int(p): [str(k) for k in keys] for p, keys in sent_lines.items()})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed saved session: {exc!r}") from exc
        return session

    @classmethod
    def from_json(cls, index: "MiniRAGIndex", text: str) -> "MiniRAGSession":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"a saved session must be JSON: {exc}") from exc
        return cls.from_dict(index, data)
