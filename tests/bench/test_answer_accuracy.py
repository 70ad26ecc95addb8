"""The answer benchmark's query-mapper comparison runs on the index's public retrieval: the same
mapping as the index's own gives the same recall@5 through both paths."""

from __future__ import annotations

from benchmarks.quality import devsets
from benchmarks.quality.answer_accuracy import mapper_record
from minirag_core.indexing.index import MiniRAGIndex
from minirag_core.types import Document


def test_mapper_record_scores_the_given_mapping_and_the_offline_one(embedder, tmp_path) -> None:
    index = MiniRAGIndex(tmp_path / "wd", embedder=embedder)
    index.insert([Document("pier", "Marta Olsen repaired the brass telescope on the north pier of Halden harbour."),
                  Document("storm", "The north pier of Halden harbour was rebuilt by Jonas Berg after the storm."),
                  Document("rain", "Rain fell all week and the roads flooded near the mill.")])
    question = devsets.Question(id="q1", question="Who rebuilt the north pier of Halden harbour?",
                                answer="Jonas Berg", evidence=("storm",), type="single")
    record = mapper_record(None, index, question, index.query_mapper)  # the offline mapper as "the model"
    assert record["source"] == "offline" and record["entities"]
    assert record["recall@5_model"] == record["recall@5_offline"] == 1.0
