"""Insert progress in characters and documents: totals reached exactly, never passed."""

from __future__ import annotations

from minirag_core.indexing.progress import InsertProgress
from minirag_core.types import Chunk, Document


def _chunks(doc: Document, pieces: list[tuple[int, int]]) -> list[Chunk]:
    return [Chunk(id=f"{doc.id}-{a}", doc_id=doc.id, order=i, text=doc.text[a:b], n_tokens=1)
            for i, (a, b) in enumerate(pieces)]


def test_overlapping_chunks_and_pieces_of_a_long_document_never_pass_the_totals() -> None:
    short, long = Document(id="s", text="x" * 100), Document(id="l", text="y" * 1000)
    progress = InsertProgress([short, long], enabled=False)
    seen = []
    # chunks overlap: their lengths add up to more than the documents
    batches = [[(short, "h", _chunks(short, [(0, 80), (40, 100)]), True),
                (long, "h", _chunks(long, [(0, 600), (500, 1000)]), False)],
               [(long, "h", _chunks(long, [(500, 1000), (900, 1000)]), False)],
               [(long, "h", [], True)]]
    for batch in batches:
        progress.update(batch)
        seen.append((progress.chars_done, progress.documents_done))
    assert all(chars <= 1100 and docs <= 2 for chars, docs in seen)
    assert seen[0] == (100 + 999, 1) and seen[-1] == (1100, 2)  # a piece stops short of its document's end
    assert [c for c, _ in seen] == sorted(c for c, _ in seen)
    progress.close()
