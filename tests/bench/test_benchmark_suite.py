"""The multi-set benchmark: the fixed tune/test split, the hybrid's fusion, scoring, and the
ablation path on a tiny index."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402
from benchmarks.quality.baselines import reciprocal_rank_fusion  # noqa: E402
from benchmarks.quality.run_suite import ABLATIONS, SetRunner, question_group, score  # noqa: E402
from benchmarks.quality.suite_report import lead_sentence, reused_note  # noqa: E402


def test_split_is_fixed():
    # the assignment must never change between runs, machines or Python versions
    assert devsets.split_of("Who directed the film?") == "test"
    assert devsets.split_of("When was the bridge built?") == "tune"
    assert devsets.split_of("  When was the bridge built?\n") == "tune"  # surrounding space ignored


def test_documentation_site_loads_pages_by_path_with_the_numbered_split(tmp_path):
    site = tmp_path / "site"
    (site / "corpus" / "guide").mkdir(parents=True)
    (site / "corpus" / "index.md").write_text("# Home\n\nSee [the guide](guide/start.md).\n")
    (site / "corpus" / "guide" / "start.md").write_text("# Start\n\nInstall it.\n")
    (site / "questions.json").write_text(
        '[{"id": "q-001", "question": "How?", "answer": "Install it.", "evidence": ["guide/start.md"], '
        '"type": "single"}, {"id": "q-002", "question": "Where?", "answer": "Home", '
        '"evidence": ["index.md", "guide/start.md"], "type": "two-page"}]')
    assert devsets.available(tmp_path) == ["site"]
    data = devsets.load("site", root=tmp_path)
    assert sorted(d.id for d in data.documents) == ["guide/start.md", "index.md"]
    assert [(q.id, q.split, q.evidence) for q in data.questions] == [
        ("q-001", "tune", ("guide/start.md",)), ("q-002", "test", ("index.md", "guide/start.md"))]


@pytest.mark.skipif(not devsets.available(), reason="no development sets beside the checkout")
def test_split_is_disjoint_and_covering():
    for name in devsets.available():
        data = devsets.load(name)
        tune = {q.id for q in data.half("tune")}
        test = {q.id for q in data.half("test")}
        assert not tune & test
        assert tune | test == {q.id for q in data.questions}
        assert 0.3 < len(tune) / len(data.questions) < 0.7, name  # a hash splits roughly in half


def test_rrf_matches_langchain_ensemble_on_a_hand_made_ranking():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], c=60)
    assert [item for item, _ in fused] == ["a", "c", "b", "d"]
    scores = dict(fused)
    assert scores["a"] == pytest.approx(0.5 / 61 + 0.5 / 62)
    assert scores["c"] == pytest.approx(0.5 / 63 + 0.5 / 61)
    assert scores["d"] == pytest.approx(0.5 / 63)
    # ties keep first-seen order, unequal weights shift the order
    assert [i for i, _ in reciprocal_rank_fusion([["x"], ["y"]])] == ["x", "y"]
    assert [i for i, _ in reciprocal_rank_fusion([["x"], ["y"]], weights=[0.2, 0.8])] == ["y", "x"]


def test_score_recall_and_all_evidence_at_k():
    q = devsets.Question("q", "Who?", "Ada Lovelace", ("d1", "d2"), "bridge")
    record = score(q, ["d1", "d9", "d8", "d7", "d2", "d6"], ["Ada Lovelace wrote", "x", "y", "z", "w", "v"])
    assert record["recall@2"] == 0.5 and record["all_evidence@2"] == 0.0
    assert record["recall@5"] == 1.0 and record["all_evidence@5"] == 1.0
    assert record["answer_in_context@5"] == 1.0
    assert question_group("musique", "3hop2") == "3hop" and question_group("hotpot", "bridge") == "bridge"


def test_lead_sentence_is_computed_from_the_numbers():
    entry = {"summary": {s: {"overall": {"recall@5": v, "all_evidence@5": a}} for s, v, a in
                         [("mini", 80.0, 60.0), ("bm25", 70.0, 50.0), ("hybrid", 75.0, 40.0),
                          ("mini-no-graph", 77.5, 55.0), ("mini-no-bridge", 81.0, 61.0)]}}
    text = lead_sentence(entry)
    assert "best baseline hybrid 75.0 (+5.0)" in text
    assert "all-evidence@5 60.0 against bm25 50.0 (+10.0)" in text  # the best on that metric, not on recall
    assert "the graph (paths and bridges) adds +2.5" in text and "bridges adds -1.0" in text


def test_run_time_says_when_the_indexes_came_from_an_earlier_run():
    built, reused = {"index": {"reused": False}}, {"index": {"reused": True}}
    assert reused_note({"sets": [built, built]}) == ""
    assert reused_note({"sets": [reused, reused]}) == ", every index built by an earlier run"
    assert reused_note({"sets": [reused, built, reused]}) == ", 2 of 3 indexes built by an earlier run"


def test_graph_only_ablation_ranks_by_the_graph_not_by_id(embedder):
    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.storage.chroma_store import ChromaVectorStore

    index = MiniRAGIndex(None, embedder=embedder, vector_store=ChromaVectorStore(None))
    index.insert([("aaa", "Paris hosts many museums and cafes along the Seine.", {}),
                  ("bbb", "Berlin has a famous wall and many clubs.", {}),
                  ("zzz", "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage.", {})])
    runner = SetRunner(index)
    doc_ids, _, context = runner.run("mini-graph-only", "What did Ada Lovelace write about?")
    assert doc_ids[0] == "zzz"  # id order would put "aaa" first
    assert "Reasoning Paths" in context
    assert set(ABLATIONS["mini-graph-only"]) == {"dense_weight", "lexical_weight"}


def test_suite_builds_each_graph_with_a_model_when_asked(tmp_path, httpserver, monkeypatch):
    """``run_suite.py --llm ollama:MODEL``: the paper's setting (a model builds the graph and maps
    the questions) on any development set, in a workdir of its own, against a server speaking
    Ollama's /api/chat (a scripted stand-in for the model's replies)."""
    import functools
    import json
    import re

    from werkzeug import Response

    from benchmarks.quality import run_suite
    from benchmarks.quality.suite_report import readme_section
    from minirag_core.llm.prompts import GLEAN_CONTINUE, GLEAN_IF_LOOP

    folder = tmp_path / "data" / "tiny"
    folder.mkdir(parents=True)
    passages = [{"id": "Silent Harbour", "text": "Silent Harbour\nSilent Harbour is a drama film of 1998 directed by "
                                                 "Orla Brennan and shot on the western coast."},
                {"id": "Orla Brennan", "text": "Orla Brennan\nOrla Brennan is a director who grew up in Galway; her "
                                               "mother was the weaver Maeve Doyle."},
                {"id": "Galway", "text": "Galway\nGalway is a harbour city on the western coast, known for its "
                                         "weavers and its film festival."}]
    (folder / "corpus.json").write_text(json.dumps(passages))
    (folder / "questions.json").write_text(json.dumps([
        {"id": "q1", "question": "Who was the mother of the director of Silent Harbour?", "answer": "Maeve Doyle",
         "evidence": "Silent Harbour<and>Orla Brennan", "type": "2hop"}]))
    monkeypatch.setattr(run_suite.devsets, "load", functools.partial(devsets.load, root=tmp_path / "data"))

    asked: list[tuple[str, bool]] = []
    name = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*\b")

    def reply(request):
        body = json.loads(request.data)
        prompt, as_json = body["messages"][-1]["content"], body.get("format") == "json"
        asked.append((prompt, as_json))
        if as_json:
            content = json.dumps({"answer_type_keywords": ["PERSON"], "entities_from_query": ["Silent Harbour"]})
        elif prompt.endswith(GLEAN_CONTINUE) or prompt.endswith(GLEAN_IF_LOOP):
            content = "<|COMPLETE|>" if prompt.endswith(GLEAN_CONTINUE) else "NO"
        else:
            text = prompt.split("-Real Data-", 1)[1].split("Text:", 1)[1].rsplit("Output:", 1)[0]
            content = "##".join(f'("entity"<|>"{n}"<|>"person"<|>"{n} is named here.")'
                                for n in dict.fromkeys(name.findall(text))) + "<|COMPLETE|>"
        return Response(json.dumps({"model": body["model"], "created_at": "2026-11-27T10:00:00Z", "done": True,
                                    "message": {"role": "assistant", "content": content}}),
                        content_type="application/json")

    httpserver.expect_request("/api/chat", method="POST").respond_with_handler(reply)
    spec = f"ollama:tiny-model:0.5b@{httpserver.url_for('/').rstrip('/')}"
    out = tmp_path / "out"
    with pytest.raises(SystemExit):  # RESULTS.md stays the embedded default's
        run_suite.parse_args(["--llm", spec, "--write-results"])
    results = run_suite.main(["--sets", "tiny", "--split", "all", "--systems", "mini,naive,bm25",
                              "--out", str(out), "--threads", "0", "--llm", spec])

    assert (out / "tiny.ollama-tiny-model-0.5b.workdir" / "manifest.json").exists()
    assert not (out / "tiny.workdir").exists()  # the embedded default's index is not touched
    extraction = [p for p, as_json in asked if "-Real Data-" in p and not as_json
                  and not p.endswith((GLEAN_CONTINUE, GLEAN_IF_LOOP))]
    assert len(extraction) == len(passages)  # every passage read by the model
    assert any(as_json for _, as_json in asked)  # and the question mapped by it
    [entry] = results["sets"]
    assert entry["index"]["entities"] == 4 and entry["summary"]["mini"]["overall"]["n"] == 1
    assert "graph built and questions mapped by `ollama:tiny-model:0.5b" in readme_section(results)


def test_except_leaves_systems_out_and_is_recorded_for_the_readme_command():
    from benchmarks.quality import run_suite

    args = run_suite.parse_args(["--except", "li-pg,hybrid"])
    assert "li-pg" not in args.systems and "hybrid" not in args.systems and "mini" in args.systems
    assert args.flags == ["--except", "li-pg,hybrid"]
    assert run_suite.parse_args([]).flags == []
    named = run_suite.parse_args(["--systems", "mini,naive", "--except", "naive"])
    assert named.systems == ["mini"] and named.flags == ["--systems", "mini,naive", "--except", "naive"]
    with pytest.raises(SystemExit):
        run_suite.parse_args(["--except", "no-such-system"])
