"""Questions the repository adds to a development set: appended to the set's own, split by its rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import devsets  # noqa: E402


def _site(root: Path) -> None:
    (root / "site" / "corpus").mkdir(parents=True)
    (root / "site" / "corpus" / "index.md").write_text("# Home\n\nInstall it.\n")
    (root / "site" / "questions.json").write_text(json.dumps(
        [{"id": "q-001", "question": "How?", "answer": "Install it.", "evidence": ["index.md"], "type": "single"}]))


def test_extra_question_files_are_appended_with_the_sets_split(tmp_path):
    _site(tmp_path)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "site_keyword.json").write_text(json.dumps(
        [{"id": "q-k01", "question": "install it", "answer": "Install it.", "evidence": ["index.md"], "type": "keyword"},
         {"id": "q-k02", "question": "home page", "answer": "Home.", "evidence": ["index.md"], "type": "keyword"}]))
    (extra / "other_keyword.json").write_text("[]")  # another set's file is not read
    data = devsets.load("site", root=tmp_path, extra_root=extra)
    assert [(q.id, q.type, q.split) for q in data.questions] == [
        ("q-001", "single", "tune"), ("q-k01", "keyword", "tune"), ("q-k02", "keyword", "test")]


def test_extra_questions_with_a_clashing_id_or_bad_rows_are_refused(tmp_path):
    _site(tmp_path)
    extra = tmp_path / "extra"
    extra.mkdir()
    bad = extra / "site_keyword.json"
    bad.write_text(json.dumps([{"id": "q-001", "question": "again", "evidence": ["index.md"], "type": "keyword"}]))
    with pytest.raises(ValueError, match="q-001"):
        devsets.load("site", root=tmp_path, extra_root=extra)
    bad.write_text(json.dumps([{"question": "no id"}]))
    with pytest.raises(ValueError, match="site_keyword.json"):
        devsets.load("site", root=tmp_path, extra_root=extra)


@pytest.mark.skipif("pydantic_docs" not in devsets.available(), reason="pydantic_docs set not present")
def test_pydantic_docs_has_keyword_questions_in_both_halves_on_existing_pages():
    data = devsets.load("pydantic_docs")
    keyword = [q for q in data.questions if q.type == "keyword"]
    assert {q.split for q in keyword} == {devsets.TUNE, devsets.TEST}
    pages = {d.id for d in data.documents}
    assert all(q.evidence and set(q.evidence) <= pages for q in keyword)
    assert len({q.id for q in data.questions}) == len(data.questions)
