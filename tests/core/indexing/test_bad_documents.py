"""Bad documents: each is rejected with a clear reason, and the rest of the call is indexed."""

from __future__ import annotations

import pytest

from minirag_core.interfaces.cli import main as cli_main
from minirag_core.indexing.documents import DEFAULT_MAX_DOCUMENT_BYTES, validate_documents
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document

from conftest import lihuaworld_documents

FIFTY_MB = 50 * 1024 * 1024


def _bad_documents(good_id: str) -> dict[str, tuple[object, str]]:
    """Bad inputs by id, with a phrase their rejection reason must contain."""
    huge = "Li Hua went to the bakery again. " * (FIFTY_MB // 33 + 1)  # ~50 MB, in memory only
    assert len(huge.encode("utf-8")) >= FIFTY_MB
    return {
        "empty": (Document("empty", ""), "empty"),
        "blank": (Document("blank", " \n\t\r\n   \f"), "whitespace"),
        "nul-bytes": (("nul-bytes", b"PK\x03\x04\x00\x00\x00\x08\x00binary\x00\x00payload", {}), "binary"),
        "nul-text": (Document("nul-text", "looks like text\x00\x00\x00but is not"), "binary"),
        "latin-1": (("latin-1", "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e".encode("latin-1"), {}), "UTF-8"),
        "png": (("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", {}), "UTF-8"),
        "huge": (Document("huge", huge), "max_document_bytes"),
        # same id as a good document later in the call's order: the first one wins
        good_id: (Document(good_id, "A different text that reuses an id already in this call."), "duplicate"),
    }


def test_bad_documents_are_rejected_and_the_rest_indexed(tmp_path, embedder):
    good = lihuaworld_documents(limit=3)
    bad = _bad_documents(good[0].id)
    # interleave: good docs first (so the duplicate is the second occurrence), bad ones between
    call = [good[0], bad["empty"][0], bad["blank"][0], good[1], bad["nul-bytes"][0], bad["nul-text"][0],
            bad["latin-1"][0], bad["png"][0], bad["huge"][0], bad[good[0].id][0], good[2]]
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    report = index.insert(call)

    assert sorted(report.inserted) == sorted(d.id for d in good)
    assert index.document_ids() == sorted(d.id for d in good)
    assert set(report.rejected) == set(bad)
    for doc_id, (_, phrase) in bad.items():
        assert phrase.lower() in report.rejected[doc_id].lower(), (doc_id, report.rejected[doc_id])
    assert str(DEFAULT_MAX_DOCUMENT_BYTES) in report.rejected["huge"]
    text = str(report)
    for doc_id in bad:
        assert f"rejected {doc_id}:" in text
    # the kept duplicate is the first text, not the second
    stored = index.graph_store.chunks(index._documents[good[0].id]["chunks"])
    assert all("reuses an id" not in c["text"] for c in stored.values())
    # the good documents are searchable
    result = index.query("Who did Li Hua talk to?", mode="naive")
    assert result.chunks and {c.doc_id for c in result.chunks} <= {d.id for d in good}


def test_call_with_only_bad_documents_changes_nothing(tmp_path, embedder):
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    report = index.insert(["", "   ", b"\xff\xfe\x00", ("x", 42, {})])
    assert report.inserted == [] and report.chunks == 0
    assert len(report.rejected) == 4
    assert "expected text, got int" in report.rejected["x"]
    assert index.document_ids() == [] and index.stats()["chunks"] == 0


def test_unlabelled_inputs_are_reported_by_position():
    accepted, rejected = validate_documents(["fine text", "", b"\x80abc", "fine text"])
    assert [d.text for d in accepted] == ["fine text"]
    assert rejected["#1"] == "empty or whitespace-only"
    assert rejected["#2"].startswith("not UTF-8 text")
    # the same text twice gets the same content id: the second is a duplicate
    assert list(rejected.values()).count("duplicate document id in this call (the first one was kept)") == 1


def test_max_document_bytes_is_configurable(tmp_path, embedder):
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder, max_document_bytes=1_000)
    doc = lihuaworld_documents(limit=1)[0]
    small = Document("small", "Li Hua met Wolfgang at the cafe.")
    report = index.insert([Document(doc.id, doc.text * 20), small])
    assert "max_document_bytes=1000" in report.rejected[doc.id]
    assert report.inserted == ["small"]


def test_cli_index_reports_binary_files_and_indexes_the_rest(tmp_path, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    good = lihuaworld_documents(limit=3)
    for i, doc in enumerate(good):
        (folder / f"session{i}.txt").write_text(doc.text, encoding="utf-8")
    (folder / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")  # not UTF-8
    (folder / "archive.txt").write_bytes(b"PK\x03\x04\x14\x00\x00\x00\x08\x00 zipped\x00\x00")  # NULs
    (folder / "empty.md").write_text("  \n", encoding="utf-8")
    workdir = tmp_path / "wd"

    code = cli_main(["index", str(folder), "--workdir", str(workdir), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, (out, err)  # the run indexed what it could: success, skipped files listed
    assert "image.txt" in err and "archive.txt" in err and "empty.md" in err
    assert "3 inserted, 0 updated, 0 unchanged, 3 skipped (listed above)" in out  # one summary line (issue 38)
    assert "index: 3 documents" in out

    code = cli_main(["query", "Who did Li Hua talk to?", "--workdir", str(workdir), "--mode", "naive",
                     "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "session" in out and "archive.txt" not in out

    # running it again: the good files are unchanged no-ops, the bad ones still reported
    code = cli_main(["index", str(folder), "--workdir", str(workdir), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and "3 unchanged" in out and "archive.txt" in err


@pytest.mark.parametrize("text", ["\u200b\u200b", "\ufeff", " \u200b\n\u2060\u00a0"])
def test_invisible_only_text_counts_as_empty(text):
    # zero-width spaces, BOMs and word joiners are not whitespace to str.strip(), but a
    # document of nothing else has nothing to index
    _, rejected = validate_documents([Document("d", text)])
    assert rejected == {"d": "empty or whitespace-only"}


def test_control_character_soup_is_binary():
    _, rejected = validate_documents([Document("d", "\x1b[0m\x1b[1m\x07\x08\x0b" * 50)])
    assert rejected["d"].startswith("looks binary")
