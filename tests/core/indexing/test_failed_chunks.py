"""A chunk whose extraction failed is recorded in the workdir, listed by ``minirag info`` and
extracted again by the next write, in this process or another (issue 45, item 1)."""

from __future__ import annotations

import json

from minirag_core.indexing.failed_chunks import FAILED_FILE
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.interfaces.cli import main
from minirag_core.llm.base import LLMError
from minirag_core.types import Document
from stand_ins import HashEmbedder, NameListExtractor, NameMapper

DOCS = [Document("ok", "Ann1 met Bob1 at the market. Bob1 sold apples to Cid1."),
        Document("flaky", "Dora2 met Eve2 at the harbour. Eve2 repaired the boat of Finn2.")]


class FlakyExtractor(NameListExtractor):
    """Fails on any chunk naming ``Dora2`` for its first ``failures`` attempts at it (the batch
    is then retried chunk by chunk), then extracts as ``NameListExtractor``; ``error`` is what it raises."""

    name = "flaky-name-list:v1"

    def __init__(self, failures: int = 1, error: type[Exception] = RuntimeError) -> None:
        self.failures, self.error, self.calls = failures, error, 0

    def extract(self, chunks, *, show_progress=False):
        if any("Dora2" in c.text for c in chunks) and len(chunks) == 1:
            self.calls += 1
            if self.calls <= self.failures:
                raise self.error("the model returned nonsense")
        elif any("Dora2" in c.text for c in chunks):
            raise self.error("the model returned nonsense for the batch")
        return super().extract(chunks)


def _open(path, extractor) -> MiniRAGIndex:
    return MiniRAGIndex(path, embedder=HashEmbedder(), extractor=extractor, query_mapper=NameMapper())


def _info(path, capsys) -> dict:
    assert main(["info", "--workdir", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


def _entities(index: MiniRAGIndex, doc_id: str) -> list[str]:
    chunk_ids = index.registry.chunk_ids(doc_id)
    return sorted(e for found in index.graph_store.chunk_entities(chunk_ids).values() for e in found)


def test_a_failed_chunk_is_recorded_listed_and_retried_by_the_next_write(tmp_path, capsys) -> None:
    flaky = FlakyExtractor(failures=1)
    index = _open(tmp_path / "wd", flaky)
    report = index.insert(DOCS)
    [failed] = report.failed_chunks
    assert report.failed_chunks[failed] == "flaky" and _entities(index, "flaky") == []
    assert json.loads((tmp_path / "wd" / FAILED_FILE).read_text())[failed]["doc_id"] == "flaky"
    assert _info(tmp_path / "wd", capsys)["failed_chunks"] == {failed: "flaky"}

    again = _open(tmp_path / "wd", flaky).insert(DOCS)  # the same files again, in another process
    assert sorted(again.unchanged) == ["flaky", "ok"] and again.retried_chunks == {failed: "flaky"}
    assert not again.failed_chunks and "1 chunks that had failed extracted now" in str(again)
    reopened = _open(tmp_path / "wd", flaky)
    assert _entities(reopened, "flaky") == ["DORA2", "EVE2", "FINN2"]
    assert _info(tmp_path / "wd", capsys)["failed_chunks"] == {}

    clean = _open(tmp_path / "clean", NameListExtractor())
    clean.insert(DOCS)
    assert _entities(reopened, "flaky") == _entities(clean, "flaky")
    assert reopened.graph_store.stats() == clean.graph_store.stats()
    assert reopened.vectors.store.ids("entities") == clean.vectors.store.ids("entities")


def test_any_write_retries_them_and_a_model_still_down_keeps_them(tmp_path) -> None:
    down = FlakyExtractor(failures=3, error=RuntimeError)
    index = _open(tmp_path / "wd", down)
    [failed] = index.insert(DOCS).failed_chunks
    index.delete(["no-such-document"])  # a write: the retry fails again (second attempt), still recorded
    assert json.loads((tmp_path / "wd" / FAILED_FILE).read_text()).keys() == {failed}

    unreachable = FlakyExtractor(failures=5, error=LLMError)  # the model server is down: the write goes on
    report = _open(tmp_path / "wd", unreachable).insert([Document("new", "Gus3 met Hal3 at noon.")])
    assert report.inserted == ["new"] and not report.retried_chunks
    assert json.loads((tmp_path / "wd" / FAILED_FILE).read_text()).keys() == {failed}

    later = _open(tmp_path / "wd", FlakyExtractor(failures=0))
    later.insert([Document("other", "Ivy4 met Jon4.")])  # another document: the next write retries anyway
    assert _entities(later, "flaky") == ["DORA2", "EVE2", "FINN2"]
    assert json.loads((tmp_path / "wd" / FAILED_FILE).read_text()) == {}


def test_deleting_the_document_forgets_its_failed_chunks(tmp_path, capsys) -> None:
    index = _open(tmp_path / "wd", FlakyExtractor(failures=9))
    assert index.insert(DOCS).failed_chunks
    index.delete(["flaky"])
    assert _info(tmp_path / "wd", capsys)["failed_chunks"] == {}


def test_an_index_without_a_workdir_retries_them_too() -> None:
    index = MiniRAGIndex(embedder=HashEmbedder(), extractor=FlakyExtractor(failures=1), query_mapper=NameMapper())
    [failed] = index.insert(DOCS).failed_chunks
    assert index.insert(DOCS).retried_chunks == {failed: "flaky"}
    assert _entities(index, "flaky") == ["DORA2", "EVE2", "FINN2"]
