"""``minirag query --where KEY=VALUE`` and ``serve``'s ``filter``: retrieval from passing documents
only, and a clear error for a filter that cannot be read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from minirag_core.interfaces.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "examples" / "lihuaworld_sample"
NAMES = ["20260105_1100.txt", "20260106_2000.txt", "20260108_1100.txt"]


def test_query_where_keeps_to_the_matching_document(tmp_path, capsys):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in NAMES:
        shutil.copy(SAMPLE / name, corpus / name)
    wd = tmp_path / "wd"
    assert main(["index", str(corpus), "--workdir", str(wd), "--quiet"]) == 0
    capsys.readouterr()
    source = str((corpus / NAMES[1]).resolve())
    question = ["query", "Where is the lunch with Wolfgang Schulz?", "--workdir", str(wd), "--json"]
    assert main([*question, "--where", f"source={source}"]) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert chunks and {c["doc_id"] for c in chunks} == {f"corpus/{NAMES[1]}"}
    assert main([*question, "--where", f"source={source}", "--where", "source=elsewhere"]) == 0
    assert json.loads(capsys.readouterr().out)["chunks"] == []
    assert main([*question, "--where", "source"]) == 2
    assert "--where takes key=value" in capsys.readouterr().err


def test_serve_query_takes_a_filter():
    from fastapi.testclient import TestClient
    from stand_ins import HashEmbedder, NameListExtractor, NameMapper

    from minirag_core.indexing.index import MiniRAGIndex
    from minirag_core.interfaces.serve_app import create_app
    from minirag_core.types import Document

    index = MiniRAGIndex(None, embedder=HashEmbedder(), extractor=NameListExtractor(), query_mapper=NameMapper())
    index.insert([Document(f"d{i}", f"Person{i} met Person{i + 1} at the harbour to talk about boats.",
                           {"year": 2020 + i % 4}) for i in range(12)])
    client = TestClient(create_app(index), base_url="http://127.0.0.1")
    ask = {"question": "Who met Person3 at the harbour?", "mode": "mini", "k": 3}
    found = client.post("/query", json={**ask, "filter": {"year": {"$in": [2021, 2022]}}}).json()
    assert len(found["chunks"]) == 3 and all(c["metadata"]["year"] in (2021, 2022) for c in found["chunks"])
    refused = client.post("/query", json={**ask, "filter": {"year": {"$around": 2021}}})
    assert refused.status_code == 422 and "unknown filter operator 'around'" in refused.json()["error"]
