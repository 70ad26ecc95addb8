"""Tried and not taken: the entity search reading a narrow projection first, exactly.

Each entity-name row is kept on the matrix's leading principal directions (a third of its
width) with the norm of the rest; a query vector's projected products bound every row's score
(Cauchy-Schwarz), the exact scores of a few rows set a cut-off, and only rows whose bound reaches
it are scored exactly; where two deciding scores lie within float rounding, the full product
answers. Write-up and figures: ``docs/experiments.md`` ("Fourth round"). This script replays the
entity searches mini makes on a set's test questions against the full product and the
projection: same rows (checked), and thread CPU of each::

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/experiments/tried/projected_entity_search.py \
        --out DIR hotpotqa_100 musique_50
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.quality.mini_cpu import in_line, parse_sets  # noqa: E402
from minirag_core.scores import SIMILARITY_BLOCK_ROWS, one_blas_thread, similarities_each  # noqa: E402
from minirag_core.search.vectors import _top_rows  # noqa: E402

#: the projection keeps this share of a matrix's width (a third of 384 dimensions: ~20-800 of
#: 11 k entity names remain to be scored exactly)
PROJECTED_SHARE = 1 / 3
#: matrices of fewer rows are read whole: at 2.5-3.7 k rows of 384 floats the projection saved
#: nothing measurable (the documentation sets' entity names); at 9-11 k it saves ~0.8 ms a query
MIN_PROJECTED_ROWS = 4096
#: slack on each row's upper bound (times the largest possible score) for the rounding of the
#: projected products: theirs is below 1e-5
MARGIN = 1e-3
#: the exact scores of ``PROBE * k`` rows with the best projected scores raise the cut-off to
#: their k-th best
PROBE = 2
#: past this share of rows left to score exactly, the full product is cheaper
MAX_EXACT_SHARE = 0.25


def best_rows(values: np.ndarray, k: int) -> np.ndarray:
    """Rows of the ``k`` largest ``values``, best first, ties by row (as the library's search)."""
    return np.array([row for row, _, _ in _top_rows(range(len(values)), values, k)], dtype=np.int64)


@dataclass(frozen=True)
class Projection:
    """A matrix's rows on ``basis`` (orthonormal columns): their coordinates ``rows`` and the
    norm of what the basis leaves out of each (``rest``); ``scale`` is the largest row norm."""

    basis: np.ndarray
    rows: np.ndarray
    rest: np.ndarray
    scale: float


def project(matrix: np.ndarray, rank: int | None = None, min_rows: int | None = None) -> Projection | None:
    """``matrix``'s rows on its ``rank`` leading principal directions (uncentred), or None when
    it has fewer than ``min_rows`` rows (``MIN_PROJECTED_ROWS``: the projection would not pay) or
    is not finite."""
    n, width = matrix.shape
    rank = rank if rank is not None else max(1, round(width * PROJECTED_SHARE))
    if n < (MIN_PROJECTED_ROWS if min_rows is None else min_rows) or rank >= width or not np.isfinite(matrix).all():
        return None
    with one_blas_thread():
        sample = matrix[:: max(1, n // 4096)].astype(np.float64)  # the directions from ~4 k rows
        _, directions = np.linalg.eigh(sample.T @ sample)  # ascending eigenvalues
        basis = np.ascontiguousarray(directions[:, ::-1][:, :rank], dtype=matrix.dtype)
        rows = np.ascontiguousarray(matrix @ basis)
        rest = np.linalg.norm((matrix - rows @ basis.T).astype(np.float64), axis=1).astype(matrix.dtype)
    scale = float(np.sqrt(np.max(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))))
    return Projection(basis, rows, rest, scale)


def nearest_rows(matrix: np.ndarray, vectors: np.ndarray, k: int, projection: Projection | None = None,
                 floor: float | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each of ``vectors``, (rows, scores) of the ``k`` rows of ``matrix`` with the largest
    products, best first, ties by row; with ``floor``, only those scoring at least ``floor``.
    ``projection`` (of ``matrix``, by :func:`project`) spares reading most rows."""
    vectors = np.asarray(vectors, dtype=matrix.dtype)
    if k <= 0 or not len(matrix):
        return [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=matrix.dtype)) for _ in vectors]
    if projection is None or not np.isfinite(vectors).all():
        return [_best(scores, k, floor) for scores in similarities_each(matrix, vectors)]
    with one_blas_thread():  # small products: more BLAS threads only wait on each other
        coordinates = vectors @ projection.basis
        projected = similarities_each(projection.rows, coordinates)
        rests = np.linalg.norm(vectors - coordinates @ projection.basis.T, axis=1)
        scales = np.linalg.norm(vectors, axis=1) * projection.scale
        pruned = [_pruned(matrix, projection, vector, approximate, rest, scale, k, floor)
                  for vector, approximate, rest, scale in zip(vectors, projected, rests.tolist(), scales.tolist())]
        left = [i for i, answer in enumerate(pruned) if answer is None]  # in one pass over the matrix
        full = {i: _best(scores, k, floor) for i, scores in zip(left, similarities_each(matrix, vectors[left]))}
    return [answer if answer is not None else full[i] for i, answer in enumerate(pruned)]


def _exact(matrix: np.ndarray, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The scores of ``rows`` (ascending) as ``similarities_each`` rounds them where BLAS scores
    rows in groups of four, each alike (OpenBLAS): the rows gathered in whole groups of four, and
    those after the last whole group of the last block scored with that block, as there."""
    last_block = (len(matrix) - 1) // SIMILARITY_BLOCK_ROWS * SIMILARITY_BLOCK_ROWS
    grouped = len(matrix) - (len(matrix) - last_block) % 4
    body = rows[: np.searchsorted(rows, grouped)]
    gathered = np.zeros((len(body) + (-len(body)) % 4, matrix.shape[1]), dtype=matrix.dtype)
    np.take(matrix, body, axis=0, out=gathered[: len(body)])
    scores = np.empty(len(rows), dtype=np.result_type(matrix, vector))
    scores[: len(body)] = similarities_each(gathered, vector[None, :])[0, : len(body)]
    if len(body) < len(rows):
        scores[len(body):] = (matrix[last_block:] @ vector)[rows[len(body):] - last_block]
    return scores


def rounding_bound(width: int, dtype: np.dtype) -> float:
    """Twice the largest rounding error of a ``width``-term dot product of unit vectors in
    ``dtype``, whatever the order of the sum: two computations of one score differ by less."""
    unit = float(np.finfo(dtype).eps) / 2
    return 2 * width * unit / (1 - width * unit)


def _best(scores: np.ndarray, k: int, floor: float | None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of every row's ``scores`` (rows and scores), those under ``floor`` left out."""
    rows = best_rows(scores, k)
    return _above(rows, scores[rows], floor)


def _above(rows: np.ndarray, scores: np.ndarray, floor: float | None) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` with their ``scores``, those under ``floor`` left out."""
    if floor is None:
        return rows, scores
    kept = scores >= floor
    return rows[kept], scores[kept]


def _pruned(matrix: np.ndarray, projection: Projection, vector: np.ndarray, approximate: np.ndarray, rest: float,
            scale: float, k: int, floor: float | None) -> tuple[np.ndarray, np.ndarray] | None:
    """One vector's answer from the rows whose upper bound reaches its ``k`` best (``approximate``:
    its projected scores, ``rest``: the norm of its part off the basis, ``scale``: its norm times
    the largest row norm), or None where float rounding could decide it (or too few rows are spared)."""
    slack = MARGIN * scale
    reach = approximate + projection.rest * rest
    cutoff = -np.inf if floor is None else floor
    rows = np.flatnonzero(reach >= cutoff - slack)
    if len(rows) > PROBE * k:  # raise the cut-off to the k-th best of a few rows
        probe = rows[np.argpartition(-approximate[rows], PROBE * k - 1)[: PROBE * k]]
        probed = matrix[probe] @ vector
        cutoff = max(cutoff, float(np.partition(probed, PROBE * k - k)[PROBE * k - k]))
        rows = rows[reach[rows] >= cutoff - slack]
    if len(rows) > MAX_EXACT_SHARE * len(matrix) or not np.isfinite(reach).all():
        return None
    scores = _exact(matrix, rows, vector)
    order = np.lexsort((rows, -scores))[: k + 1]
    deciding = scores[order].astype(np.float64)
    tolerance = rounding_bound(matrix.shape[1], matrix.dtype) * scale
    if floor is not None:  # comparisons under the floor decide nothing
        deciding = deciding[deciding >= floor - tolerance]
        if np.any(np.abs(deciding - floor) < tolerance):
            return None
    if np.any(deciding[:-1] - deciding[1:] < tolerance):
        return None
    top = order[:k]
    return _above(rows[top], scores[top], floor)


def searches(name: str, workdir: Path) -> tuple[np.ndarray, list[tuple[np.ndarray, int]]]:
    """The entity matrix of ``name``'s index and the (vectors, k) of every entity search mini
    makes on its test questions (graph half in line)."""
    from benchmarks.common import open_corpus_index
    from benchmarks.quality import devsets
    import minirag_core.retrieval.modes.mini as mini

    mini.beside = in_line
    data = devsets.load(name)
    index, _ = open_corpus_index(workdir, data.documents, rebuild=False)
    sources, made = index.sources, []
    search = sources.nearest_entities_many

    def recorded(vectors: Any, k: int) -> Any:
        made.append((np.array(vectors, dtype=np.float32), k))
        return search(vectors, k)

    sources.nearest_entities_many = recorded
    for q in data.questions:
        if q.split == "test" and q.has_evidence:
            index.query(q.question)
    _, matrix = sources.vectors.vectors("entities")
    return matrix, made


def compare(matrix: np.ndarray, made: list[tuple[np.ndarray, int]], repeats: int = 3) -> dict[str, Any]:
    projection = project(matrix, min_rows=0)
    full_ms, projected_ms, same = [], [], 0
    for vectors, k in made:
        best = {"full": float("inf"), "projected": float("inf")}
        for _ in range(repeats):
            for how, use in (("full", None), ("projected", projection)):
                start = time.thread_time()
                found = nearest_rows(matrix, vectors, k, use)
                best[how] = min(best[how], (time.thread_time() - start) * 1000)
                if how == "full":
                    full = found
                else:
                    same += all(np.array_equal(a[0], b[0]) for a, b in zip(full, found))
        full_ms.append(best["full"])
        projected_ms.append(best["projected"])
    return {"searches": len(made), "rows": len(matrix), "same_rows_share": same / max(repeats * len(made), 1),
            "full_ms_p50": round(statistics.median(full_ms), 3) if made else None,
            "projected_ms_p50": round(statistics.median(projected_ms), 3) if made else None}


def main(argv: list[str] | None = None) -> int:
    args = parse_sets(__doc__ or "", argv, repeats=3)
    print(json.dumps({name: compare(*searches(name, args.out / f"{name}.workdir"), args.repeats)
                      for name in args.sets}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
