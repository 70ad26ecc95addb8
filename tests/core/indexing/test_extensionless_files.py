"""A file without an extension (a Makefile, a licence) is not known to be a document: a folder
walk skips it with the reason, naming the file itself indexes it."""

from __future__ import annotations

from minirag_core.indexing.file_reading import collect_files


def test_extensionless_file_in_a_folder_is_skipped_with_its_reason(tmp_path):
    (tmp_path / "guide.rst").write_text("Guide\n=====\n\nText.\n", encoding="utf-8")
    makefile = tmp_path / "Makefile"
    makefile.write_text("# Minimal makefile\nhtml:\n\tsphinx-build . _build\n", encoding="utf-8")
    found = collect_files([tmp_path])
    assert found.readable == [tmp_path / "guide.rst"]
    assert "no file extension" in found.skipped[makefile] and "name the file" in found.skipped[makefile]


def test_extensionless_file_named_explicitly_is_read(tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text("html:\n\tsphinx-build . _build\n", encoding="utf-8")
    found = collect_files([makefile])
    assert found.readable == [makefile] and not found.skipped
