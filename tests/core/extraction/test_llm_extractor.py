"""LLMExtractor, CallableBackend, LLMCallCache and LLMQueryMapper with scripted models."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from minirag_core.extraction.base import Extractor, QueryMapper
from minirag_core.extraction.llm_extractor import LLMExtractor
from minirag_core.llm.base import LLMBackend, LLMError
from minirag_core.llm.cache import CachedLLM, LLMCallCache
from minirag_core.llm.callable_backend import CallableBackend
from minirag_core.context import render_context
from minirag_core.llm.prompts import GLEAN_CONTINUE, GLEAN_IF_LOOP, build_answer_prompt
from minirag_core.retrieval.query.model_mapping import LLMQueryMapper, format_type_pool
from minirag_core.types import Chunk, KeyEdge, QueryMapping, ReasoningPath, RetrievalResult, ScoredChunk

FIRST = (
    '("entity"<|>"Li Hua"<|>"person"<|>"Li Hua hosts game night.")##'
    '("entity"<|>"Wolfgang"<|>"person"<|>"Wolfgang is a roommate.")##'
    '("relationship"<|>"Li Hua"<|>"Wolfgang"<|>"They live together."<|>"roommates"<|>8)<|COMPLETE|>'
)
MALFORMED = 'Sure!\n(entity|"Jennifer"|person|"Jennifer plays chess.")\n("relationship"<|"Jennifer"<|>"Li Hua"<|"rivals"<|"chess"<|>"strong")'
TRUNCATED = '("entity"<|>"Game Night"<|>"event"<|>"A weekly ev'


def chunk(i: int, text: str = "") -> Chunk:
    return Chunk(id=f"c{i}", doc_id=f"d{i}", order=i, text=text or f"Text of chunk {i}.", n_tokens=5)


class Scripted:
    """A stand-in model: the reply depends on which prompt it is given."""

    def __init__(self, first: str = FIRST, glean: str = MALFORMED, if_loop: str = "NO", delay: float = 0.0):
        self.first, self.glean, self.if_loop, self.delay = first, glean, if_loop, delay
        self.calls: list[str] = []
        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0

    def __call__(self, prompt: str) -> str:
        with self.lock:
            self.calls.append(prompt)
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            if self.delay:
                time.sleep(self.delay)
            if prompt.endswith(GLEAN_IF_LOOP):
                return self.if_loop
            if prompt.endswith(GLEAN_CONTINUE):
                return self.glean
            return self.first
        finally:
            with self.lock:
                self.active -= 1


def test_protocols() -> None:
    llm = CallableBackend("scripted", Scripted())
    ex = LLMExtractor(llm)
    assert isinstance(llm, LLMBackend)
    assert isinstance(ex, Extractor)
    assert isinstance(LLMQueryMapper(llm), QueryMapper)
    assert ex.name == "llm:scripted:glean1"


def test_extract_parses_and_gleans() -> None:
    model = Scripted()
    ex = LLMExtractor(CallableBackend("scripted", model), max_gleaning=1)
    [res] = ex.extract([chunk(0, "Li Hua and Wolfgang share a flat.")])
    assert len(model.calls) == 2  # first pass + one gleaning, no if_loop on the last round
    assert "Li Hua and Wolfgang share a flat." in model.calls[0]
    assert model.calls[1].startswith(model.calls[0] + FIRST)  # history folded into the prompt
    assert [e.name for e in res.entities] == ["Li Hua", "Wolfgang", "Jennifer"]
    assert {(r.source, r.target) for r in res.relations} == {("Li Hua", "Wolfgang"), ("Jennifer", "Li Hua")}
    rival = next(r for r in res.relations if r.source == "Jennifer")
    assert rival.weight == 1.0 and rival.keywords == "chess"


def test_gleaning_loop_stops_on_no_and_continues_on_yes() -> None:
    model = Scripted(glean=TRUNCATED, if_loop="NO")
    LLMExtractor(CallableBackend("m", model), max_gleaning=3).extract([chunk(0)])
    assert len(model.calls) == 3  # first, glean, if_loop -> NO
    model = Scripted(glean=TRUNCATED, if_loop="Yes.")
    [res] = LLMExtractor(CallableBackend("m", model), max_gleaning=3).extract([chunk(0)])
    assert len(model.calls) == 1 + 3 + 2  # three gleanings, two if_loop questions
    game = next(e for e in res.entities if e.name == "Game Night")
    assert game.description == ""


def test_no_gleaning() -> None:
    model = Scripted()
    ex = LLMExtractor(CallableBackend("m", model), max_gleaning=0)
    assert ex.name == "llm:m:glean0"
    results = ex.extract([chunk(i) for i in range(3)])
    assert len(model.calls) == 3 and len(results) == 3


def test_malformed_output_never_raises() -> None:
    model = Scripted(first="\x00garbage ((( <|> ## {\"x\": [", glean="")
    [res] = LLMExtractor(CallableBackend("m", model)).extract([chunk(0)])
    assert res.entities == [] and res.relations == []


def test_cache_prevents_second_call(tmp_path: Path) -> None:
    path = tmp_path / "llm_cache.jsonl"
    model = Scripted()
    chunks = [chunk(i) for i in range(3)]
    first = LLMExtractor(CallableBackend("m", model), cache=LLMCallCache(path)).extract(chunks)
    assert len(model.calls) == 6
    again = LLMExtractor(CallableBackend("m", model), cache=LLMCallCache(path)).extract(chunks)
    assert len(model.calls) == 6  # all from the file
    assert [r.to_json() for r in again] == [r.to_json() for r in first]
    other = LLMExtractor(CallableBackend("other-model", model), cache=LLMCallCache(path))
    other.extract(chunks[:1])
    assert len(model.calls) == 8  # another model name never reuses replies


def test_cache_ignores_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    cache = LLMCallCache(path)
    cache.put("m", "p1", False, "r1")
    cache.put("m", "p2", True, "r2 {with} \"quotes\" \ud800")
    cache.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"key": "abc", "reply": "half')  # a write cut short by SIGKILL
    reloaded = LLMCallCache(path)
    assert reloaded.get("m", "p1", False) == "r1"
    assert reloaded.get("m", "p2", True) == "r2 {with} \"quotes\" \ud800"
    assert reloaded.get("m", "p2", False) is None
    reloaded.put("m", "p3", False, "r3")  # appended after the broken line, on its own line
    reloaded.close()
    final = LLMCallCache(path)
    assert len(final) == 3 and final.get("m", "p3", False) == "r3"


def test_cache_thread_safe(tmp_path: Path) -> None:
    cache = LLMCallCache(tmp_path / "t.jsonl")

    def work(t: int) -> None:
        for i in range(50):
            cache.put("m", f"{t}-{i}", False, str(i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    cache.close()
    assert len(LLMCallCache(tmp_path / "t.jsonl")) == 200


async def test_cached_llm_async(tmp_path: Path) -> None:
    calls: list[str] = []
    llm = CachedLLM(CallableBackend("m", lambda p: calls.append(p) or "reply"), LLMCallCache(tmp_path / "a.jsonl"))
    assert llm.name == "m"
    assert await llm.acomplete("p") == "reply"
    assert await llm.acomplete("p") == "reply"
    assert llm.complete("p") == "reply"
    assert calls == ["p"]


def test_concurrency_bound_respected() -> None:
    model = Scripted(delay=0.03)
    ex = LLMExtractor(CallableBackend("m", model), max_gleaning=0, max_concurrency=3)
    results = ex.extract([chunk(i) for i in range(12)], show_progress=True)
    assert len(results) == 12
    assert model.peak == 3


async def test_extract_inside_running_loop_and_order() -> None:
    texts = [f"chunk number {i}" for i in range(5)]

    def fn(prompt: str) -> str:
        i = next(n for n, t in enumerate(texts) if t in prompt)
        return f'("entity"<|>"E{i}"<|>"thing"<|>"from chunk {i}")'

    ex = LLMExtractor(CallableBackend("m", fn), max_gleaning=0, max_concurrency=2)
    sync_results = ex.extract([chunk(i, t) for i, t in enumerate(texts)])  # loop running: worker thread
    async_results = await ex.aextract([chunk(i, t) for i, t in enumerate(texts)])
    assert [r.entities[0].name for r in sync_results] == [f"E{i}" for i in range(5)]
    assert [r.to_json() for r in async_results] == [r.to_json() for r in sync_results]


def test_model_failure_propagates() -> None:
    def fn(prompt: str) -> str:
        if "bad chunk" in prompt:
            raise ConnectionError("refused")
        return FIRST

    ex = LLMExtractor(CallableBackend("m", fn), max_gleaning=0)
    with pytest.raises(LLMError, match="refused"):
        ex.extract([chunk(0), chunk(1, "bad chunk"), chunk(2)])


async def test_callable_backend_async_variants() -> None:
    seen: list[bool] = []

    def fn(prompt: str, json_mode: bool = False) -> str:
        seen.append(json_mode)
        return "ok"

    async def afn(prompt: str) -> str:
        return "async ok"

    assert await CallableBackend("s", fn).acomplete("p", json_mode=True) == "ok"
    assert seen == [True]
    assert await CallableBackend("a", fn, afn).acomplete("p") == "async ok"


def test_llm_query_mapper() -> None:
    pool = {"PERSON": ["JANE DOE", "JOHN SMITH"], "LOCATION": ["DOWNTOWN"], "DATE AND TIME": ["THIS AFTERNOON"]}
    seen: list[tuple[str, bool]] = []

    def fn(prompt: str, json_mode: bool = False) -> str:
        seen.append((prompt, json_mode))
        return '"answer_type_keywords": ["location", "PLANET", "Person"], "entities_from_query": ["Li Hua"]'

    m = LLMQueryMapper(CallableBackend("m", fn)).map_query("Where does Li Hua {live}?", pool)
    assert m == QueryMapping(entities=["Li Hua"], answer_types=["LOCATION", "PERSON"], source="model")
    prompt, json_mode = seen[0]
    assert json_mode and "Query: Where does Li Hua {live}?" in prompt
    assert "'PERSON': ['JANE DOE', 'JOHN SMITH']" in prompt
    bad = LLMQueryMapper(CallableBackend("m", lambda p: "no idea")).map_query("Where does Li Hua live?", pool)
    assert bad.source == "fallback" and bad.entities == ["Li Hua"]


def test_format_type_pool() -> None:
    text = format_type_pool({"PERSON": ["JANE DOE", "O'NEIL"], "GEO": []}, max_examples=1)
    assert text == "{\n 'PERSON': ['JANE DOE'],\n 'GEO': []\n}"


def test_render_context_and_answer_prompt() -> None:
    result = RetrievalResult(
        query="q",
        mode="mini",
        chunks=[ScoredChunk("c1", "doc-7", 'He said "hi", then {left}.\nNew line', 0.9, 10)],
        answer_candidates=["BRIAR"],
        key_edges=[KeyEdge("BRIAR", "PRACTICE", 1.5, "Briar runs practice", "sport")],
        paths=[ReasoningPath("BRIAR", ["BRIAR", "PRACTICE", "BOTTLE"], 2.25)],
    )
    ctx = render_context(result)
    assert result.to_context() == ctx
    for title in ("Answer Candidates", "Key Relationships", "Reasoning Paths", "Sources"):
        assert f"-----{title}-----" in ctx
    assert "BRIAR -> PRACTICE -> BOTTLE,2.2500" in ctx
    assert "doc-7" in ctx and '"He said ""hi"", then {left}.\nNew line"' in ctx
    prompt = build_answer_prompt("What does {Briar} bring?", ctx, response_type="Single Sentence")
    assert "Single Sentence" in prompt and ctx in prompt and prompt.rstrip().endswith("---Answer---")
    assert "What does {Briar} bring?" in prompt


def test_render_context_keeps_graph_rows_touching_the_chosen_chunks() -> None:
    edges = [KeyEdge(f"E{i}", f"F{i}", float(i), f"edge {i}", "k") for i in range(30)]
    result = RetrievalResult(
        query="q", mode="mini",
        chunks=[ScoredChunk("c1", "doc-1", "text about E3 and E7", 0.9, 10, entities=["E3", "E7"])],
        answer_candidates=["E7", "Z"], key_edges=edges,
        paths=[ReasoningPath("E3", ["E3", "F3"], 2.0), ReasoningPath("Q", ["Q", "Z"], 5.0)],
    )
    ctx = render_context(result)
    assert "edge 7" in ctx and "edge 3" in ctx and "edge 29" not in ctx   # only rows touching E3 / E7
    assert "E3 -> F3" in ctx and "Q -> Z" not in ctx
    assert ",E7" in ctx and ",Z\n" not in ctx
    assert ctx.index("edge 7") < ctx.index("edge 3")                        # best score first
    unlinked = RetrievalResult(query="q", mode="mini", chunks=[ScoredChunk("c1", "d", "t", 0.9, 10)], key_edges=edges)
    assert render_context(unlinked).count("edge ") == 10                    # no chunk entities: top rows, capped


def test_cache_stores_many_replies_in_one_append_after_a_truncated_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with LLMCallCache(path) as cache:
        cache.put("m", "p0", False, "r0")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"key": "abc", "reply": "half')  # a write cut short
    cache = LLMCallCache(path)
    cache.put_many("m", [("p1", "r1 é"), ("p2", "r2"), ("p0", "newer")])
    for reader in (cache, LLMCallCache(path)):  # as written, and read back from the file
        assert [reader.get("m", f"p{i}", False) for i in range(3)] == ["newer", "r1 é", "r2"]
        assert reader.get("m", "p1", True) is None and len(reader) == 3
    assert path.read_text(encoding="utf-8").count("\n") == 5  # r0, the broken line ended, one line per reply


def test_cache_holds_offsets_not_replies(tmp_path: Path) -> None:
    """Replies stay on disk: a reopened cache of 20 MB of replies holds far less than that,
    and still returns every reply exactly."""
    import tracemalloc

    path = tmp_path / "big.jsonl"
    with LLMCallCache(path) as cache:
        for i in range(200):
            cache.put("m", f"p{i}", False, f"{i}:" + "é" * 100_000)
    tracemalloc.start()
    reopened = LLMCallCache(path)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert held < 1_000_000
    assert len(reopened) == 200
    assert all(reopened.get("m", f"p{i}", False) == f"{i}:" + "é" * 100_000 for i in (0, 123, 199))
    reopened.put("m", "p0", False, "newer")  # a later line for the same key wins
    assert reopened.get("m", "p0", False) == "newer" and LLMCallCache(path).get("m", "p0", False) == "newer"


def test_cache_never_returns_another_keys_line(tmp_path: Path) -> None:
    """If the file changed under the cache (another writer), a stale offset is a miss."""
    path = tmp_path / "c.jsonl"
    cache = LLMCallCache(path)
    cache.put("m", "p1", False, "r1")
    cache.put("m", "p2", False, "r2")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[1] + lines[0], encoding="utf-8")  # equal lengths: each offset finds the other key
    assert cache.get("m", "p1", False) in (None, "r1") and cache.get("m", "p2", False) in (None, "r2")
    assert LLMCallCache(path).get("m", "p2", False) == "r2"


def _titled(order: int, text: str) -> Chunk:
    return Chunk(id=f"t{order}", doc_id="doc", order=order, text=text, n_tokens=30)


HASTINGS = ("Warren Hastings\nWarren Hastings was an English statesman who served as the first governor of "
            "the presidency of Fort William in Bengal.")


def test_a_titled_chunk_records_its_subject_on_a_model_built_graph() -> None:
    """Bridges follow a chunk's subject; the model is not asked for it, the text's shape gives it."""
    names_it = Scripted(first='("entity"<|>"Warren Hastings"<|>"person"<|>"A statesman.")##'
                              '("entity"<|>"Bengal"<|>"location"<|>"A region.")<|COMPLETE|>', glean="")
    [res] = LLMExtractor(CallableBackend("m", names_it), max_gleaning=0).extract([_titled(0, HASTINGS)])
    assert res.subject_entities == ["Warren Hastings"] and len(res.entities) == 2

    leaves_it_out = Scripted(first='("entity"<|>"Bengal"<|>"location"<|>"A region.")<|COMPLETE|>', glean="")
    [res] = LLMExtractor(CallableBackend("m", leaves_it_out), max_gleaning=0).extract([_titled(0, HASTINGS)])
    added = next(e for e in res.entities if e.name == "Warren Hastings")
    assert res.subject_entities == ["Warren Hastings"]
    assert added.type == "UNKNOWN" and added.description.startswith("Warren Hastings was an English statesman")

    # a later chunk's first line is not a title; a chat has no subject
    chat = "Time: 20260101_10:00\nAnna: Did you read about Warren Hastings in the history class today?"
    results = LLMExtractor(CallableBackend("m", names_it), max_gleaning=0).extract(
        [_titled(1, HASTINGS), _titled(0, chat)])
    assert [r.subject_entities for r in results] == [[], []]


def test_bridges_work_on_a_model_built_graph(embedder, tmp_path: Path) -> None:
    """A passage one entity away from the question's passage is reached through its subject when
    a model builds the graph, as with the offline extractor (the path says so)."""
    import json
    import re

    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.types import Document

    name = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")

    def model(prompt: str, json_mode: bool = False) -> str:
        if json_mode:  # query mapping
            return json.dumps({"answer_type_keywords": ["PERSON"], "entities_from_query": ["Silent Harbour"]})
        if prompt.endswith(GLEAN_CONTINUE) or prompt.endswith(GLEAN_IF_LOOP):
            return "<|COMPLETE|>"
        text = prompt.split("-Real Data-", 1)[1].split("Text:", 1)[1].rsplit("Output:", 1)[0]
        found = [n for n in dict.fromkeys(name.findall(text)) if n not in {"The", "Her", "It"}][:4]
        return "##".join(f'("entity"<|>"{n}"<|>"person"<|>"{n} is named here.")' for n in found) + "<|COMPLETE|>"

    docs = [Document("film", "Silent Harbour\nSilent Harbour is a drama film of 1998 directed by Orla Brennan, "
                             "shot on the western coast over one winter."),
            Document("director", "Orla Brennan\nOrla Brennan grew up in Galway and studied painting there before "
                                 "she moved to Dublin. Her mother was the weaver Maeve Doyle."),
            *[Document(f"other{i}", f"Harbour Film {i}\nHarbour Film {i} is a drama film about a silent harbour "
                                    f"town, shot over a winter on the coast in year {1990 + i}.") for i in range(6)]]
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, llm=CallableBackend("scripted", model))
    index.insert(docs)
    # seeds held to the question's own name: the look-alike titles ("Harbour Film 3", name similarity
    # about 0.63) would otherwise seed too, and their own passages' subject bridges outweigh this one
    result = index.query("Who was the mother of the director of Silent Harbour?", mode="mini", top_k=3,
                         seed_min_similarity=0.9)
    assert [c.doc_id for c in result.chunks][:2] == ["film", "director"]
    assert any(p.query_entity.startswith("bridge from film") for p in result.paths)
