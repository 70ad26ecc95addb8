"""The stored form of an extraction: plain JSON that reads back to the same result."""

from __future__ import annotations

import json
from dataclasses import asdict

from minirag_core.types import ExtractedEntity, ExtractedRelation, ExtractionResult


def test_extraction_result_json_round_trip_and_matches_asdict() -> None:
    result = ExtractionResult([ExtractedEntity("Ada", "PERSON", "wrote the notes")],
                              [ExtractedRelation("Ada", "Babbage", "worked with", "collaboration", 2.0)],
                              ["engine"], 1, ["Ada"])
    stored = result.to_json()
    assert stored == asdict(result)
    stored["entities"][0]["name"] = "changed"  # a copy: the result is not changed through it
    assert result.entities[0].name == "Ada"
    assert ExtractionResult.from_json(json.loads(json.dumps(result.to_json()))) == result
