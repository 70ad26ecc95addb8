"""Citations: every chunk and every hit knows its document, heading path and character offsets,
checked against the source text (``text[start_index:end_index] == chunk text``, exactly, not stripped)
for Markdown, reST, plain text and chat-like corpora."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from minirag_core.graph import heterogeneous
from minirag_core.indexing.chunking import iter_chunks
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.storage.graph_stores import whole_graph
from minirag_core.types import Document

from conftest import lihuaworld_documents
from stand_ins import NameListExtractor, NameMapper

DATA = Path(os.environ.get("MINIRAG_DATA_ROOT") or Path(__file__).resolve().parents[4] / "shared" / "data")
MODES = ("mini", "light", "naive")


def _corpus() -> dict[str, Document]:
    docs = []
    for folder, name in (("uv_docs", "concepts/configuration-files.md"), ("uv_docs", "concepts/preview.md"),
                         ("scrapy_docs", "topics/stats.rst")):
        path = DATA / folder / "corpus" / name
        docs.append(Document(id=f"{folder}/{name}", text=path.read_text(encoding="utf-8"),
                             metadata={"source": str(path)}))
    wiki = json.loads((DATA / "hotpotqa_100" / "corpus.json").read_text(encoding="utf-8"))[:3]
    docs += [Document(id=p["id"], text=p["text"]) for p in wiki]  # plain text: no file name, no headings
    docs += lihuaworld_documents(weeks=("week1",))[:3]  # chat-like sessions
    return {d.id: d for d in docs}


@pytest.fixture(scope="module")
def corpus():
    return _corpus()


@pytest.fixture(scope="module", params=["networkx", "sqlite"])
def index(request, tmp_path_factory, embedder, corpus):
    built = MiniRAGIndex(tmp_path_factory.mktemp("cite") / "wd", embedder=embedder, extractor=NameListExtractor(),
                         query_mapper=NameMapper(), graph_backend=request.param, chunk_tokens=120, chunk_overlap=20)
    built.insert(list(corpus.values()))
    return built


def _assert_cites_its_source(hit, corpus) -> None:
    text = corpus[hit.doc_id].text
    assert hit.start_index is not None and hit.end_index is not None
    assert text[hit.start_index:hit.end_index] == hit.text


def test_every_stored_chunk_is_the_exact_slice_of_its_document(index, corpus):
    graph = whole_graph(index.graph_store)
    chunks = [a for _, a in graph.nodes(data=True) if a.get("kind") == "chunk"]
    per_doc = {d: sum(a["doc_id"] == d for a in chunks) for d in corpus}
    assert per_doc["scrapy_docs/topics/stats.rst"] > 3 and max(per_doc.values()) > 3  # several windows per page
    for attrs in chunks:
        text = corpus[attrs["doc_id"]].text
        assert text[attrs["start_index"]:attrs["end_index"]] == attrs["text"]
        if attrs["doc_id"].endswith((".md", ".rst")):  # Markdown and reST: page title, then the sections
            path = attrs["heading_path"]
            assert path and all(title.strip() for title in path)
            assert path[-1] in text[:attrs["end_index"]] or len(path) == 1
        else:
            assert "heading_path" not in attrs


@pytest.mark.parametrize("mode", MODES)
def test_hits_carry_document_offsets_and_heading_path(index, corpus, mode):
    questions = ["How are stats collected by the StatsCollector?", "What does preview mode enable?",
                 "Who designed Demon Dice?", "What did Li Hua talk about?"]
    seen_paths = 0
    for question in questions:
        result = index.query(question, mode=mode, top_k=4)
        assert result.chunks
        for hit in result.chunks:
            _assert_cites_its_source(hit, corpus)
            seen_paths += bool(hit.heading_path)
        as_json = json.loads(result.to_json())["chunks"][0]
        assert {"doc_id", "start_index", "end_index", "heading_path"} <= set(as_json)
    assert seen_paths  # some hits came from the Markdown and reST pages, with their sections


def test_long_document_windows_a_segment_at_a_time_keep_true_offsets(embedder, corpus):
    document = corpus["scrapy_docs/topics/stats.rst"]
    plain = Document(id="long", text=document.text * 3)  # no file name: windows, not Markdown blocks
    chunks = list(iter_chunks(plain, embedder, chunk_tokens=200, overlap_tokens=30, segment_chars=5000))
    assert len(chunks) > 10
    for chunk in chunks:
        assert plain.text[chunk.start_index:chunk.end_index] == chunk.text
    assert [c.start_index for c in chunks] == sorted(c.start_index for c in chunks)
    assert chunks[-1].end_index == len(plain.text.rstrip()) or chunks[-1].end_index <= len(plain.text)


def test_a_window_that_is_not_a_slice_gets_no_offsets(embedder):
    class RejoiningEmbedder:  # an embedder whose windows rejoin words with single spaces
        name, dim, max_tokens = embedder.name, embedder.dim, embedder.max_tokens

        def count_tokens(self, text):
            return len(text.split())

        def token_windows(self, text, size, overlap):
            words = text.split()
            return [" ".join(words[i:i + size]) for i in range(0, len(words), size - overlap)]

    doc = Document(id="d", text="one  two\nthree   four five six seven eight")
    chunks = list(iter_chunks(doc, RejoiningEmbedder(), chunk_tokens=3, overlap_tokens=1))
    placed = [c for c in chunks if c.start_index is not None]
    assert [c.text for c in chunks if c not in placed] == ["one two three", "three four five"]  # no place, no wrong one
    assert placed and all(doc.text[c.start_index:c.end_index] == c.text for c in placed)


def test_an_index_built_before_offsets_were_kept_still_loads_without_them(tmp_path, embedder, corpus, monkeypatch):
    docs = [corpus["uv_docs/concepts/preview.md"], corpus["Demon Dice"]]
    with monkeypatch.context() as patch:  # chunk nodes as they were stored before: no offsets, no heading path
        patch.setattr(heterogeneous, "citation", lambda chunk: {})
        old = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=NameListExtractor(),
                           query_mapper=NameMapper(), chunk_tokens=120, chunk_overlap=20)
        old.insert(docs)
        old.close()
    reopened = MiniRAGIndex(tmp_path / "wd", embedder=embedder, extractor=NameListExtractor(),
                            query_mapper=NameMapper(), chunk_tokens=120, chunk_overlap=20)
    hits = reopened.query("What does preview mode enable?", mode="naive").chunks
    assert hits and all(h.start_index is None and h.end_index is None and h.heading_path == [] for h in hits)
    reopened.insert([corpus["scrapy_docs/topics/stats.rst"]])  # new documents are cited
    hits = reopened.query("How are stats collected by the StatsCollector?", mode="naive").chunks
    assert any(h.doc_id.endswith("stats.rst") for h in hits)
    for hit in hits:
        if hit.doc_id.endswith("stats.rst"):
            _assert_cites_its_source(hit, corpus)
        else:
            assert hit.start_index is None


def test_langchain_documents_carry_the_citation(index, corpus):
    from langchain_minirag.retrievers import MiniRAGRetriever

    retriever = MiniRAGRetriever.from_index(index, k=4)
    for question in ("How are stats collected by the StatsCollector?", "Who designed Demon Dice?"):
        documents = retriever.invoke(question)
        assert len(documents) == 4
        for document in documents:
            meta = document.metadata
            assert meta["document_id"] == meta["doc_id"] and meta["source"]
            text = corpus[meta["document_id"]].text
            assert text[meta["start_index"]:meta["end_index"]] == document.page_content
            assert isinstance(meta["heading_path"], list)
            assert bool(meta["heading_path"]) == meta["document_id"].endswith((".md", ".rst"))


def test_llama_index_nodes_carry_the_citation(index, corpus):
    from llama_index.core.schema import NodeRelationship

    from llama_index_minirag.retriever import MiniRAGRetriever

    retriever = MiniRAGRetriever.from_index(index, top_k=4)
    nodes = retriever.retrieve("What does preview mode enable?")
    assert len(nodes) == 4
    for scored in nodes:
        node = scored.node
        doc_id = node.relationships[NodeRelationship.SOURCE].node_id
        assert node.source_node.node_id == doc_id == node.metadata["minirag_doc_id"]
        assert corpus[doc_id].text[node.start_char_idx:node.end_char_idx] == node.get_content()
        assert bool(node.metadata["heading_path"]) == doc_id.endswith((".md", ".rst"))


def test_cli_json_cites_the_file(tmp_path, corpus, capsys):
    from minirag_core.interfaces.cli import main

    folder = tmp_path / "docs"
    folder.mkdir()
    for doc_id in ("uv_docs/concepts/preview.md", "scrapy_docs/topics/stats.rst"):
        (folder / Path(doc_id).name).write_text(corpus[doc_id].text, encoding="utf-8")
    assert main(["index", str(folder), "--workdir", str(tmp_path / "wd"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", "How are stats collected?", "--workdir", str(tmp_path / "wd"), "--json", "--k", "3"]) == 0
    hits = json.loads(capsys.readouterr().out)["chunks"]
    assert len(hits) == 3
    for hit in hits:
        source = Path(hit["metadata"]["source"])
        assert source.read_text(encoding="utf-8")[hit["start_index"]:hit["end_index"]] == hit["text"]
        assert hit["heading_path"] and hit["heading_path"][0]
