"""``ScoreTable``: per-chunk scores held as one numpy array, read like a ``dict``.

Retrieval used to turn every chunk's similarity into a Python dict and sort it whole, work
that grew with the corpus on every query. A table keeps the array, answers ``table[id]``
for the few chunks a query touches, and takes its top ``n`` by partial selection.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

_controller: Any = None
_controller_lock = threading.Lock()


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread: a query's products are small, and on a busy
    machine BLAS's worker threads wait on descheduled peers (5-25x slower measured)."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        with _controller_lock:
            _controller = _controller or ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")


def similarities(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` on one BLAS thread (memory-bound: more threads only wait)."""
    with one_blas_thread():
        return matrix @ vector


#: rows of a matrix read per block by :func:`similarities_each` (about 1.5 MB of 384-d float32: stays in cache)
SIMILARITY_BLOCK_ROWS = 1024


def similarities_each(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``vectors @ matrix.T`` (one row per vector) as one matrix-vector product per vector on each
    block of rows while the block is in cache: a single pass over ``matrix``, about 1.3-1.5x faster
    than BLAS's matrix product for a few vectors against many rows (one BLAS thread)."""
    vectors = np.asarray(vectors, dtype=matrix.dtype)
    out = np.empty((len(vectors), len(matrix)), dtype=np.result_type(matrix, vectors))
    with one_blas_thread():
        for start in range(0, len(matrix), SIMILARITY_BLOCK_ROWS):
            block = matrix[start:start + SIMILARITY_BLOCK_ROWS]
            for row, vector in zip(out, vectors):
                np.dot(block, vector, out=row[start:start + len(block)])
    return out


class ScoreTable(Mapping[str, float]):
    """Scores of ``ids`` (sorted, unique) as a float64 array; ``position`` maps id -> row."""

    def __init__(self, ids: Sequence[str], values: np.ndarray, position: Mapping[str, int] | None = None) -> None:
        self.ids = ids
        self.scores = np.asarray(values, dtype=np.float64)
        self.position = position if position is not None else {c: i for i, c in enumerate(ids)}

    def __getitem__(self, key: str) -> float:
        return float(self.scores[self.position[key]])

    def get(self, key: str, default: float | None = None) -> float | None:  # type: ignore[override]
        row = self.position.get(key)
        return default if row is None else float(self.scores[row])

    def __contains__(self, key: object) -> bool:
        return key in self.position

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def top(self, n: int) -> list[str]:
        """The ``n`` best ids by (-score, id), as ``sorted(...)[:n]`` would give them."""
        size = len(self.ids)
        n = min(n, size)
        if n <= 0:
            return []
        values = self.scores
        if n < size:  # every row tied with the n-th best stays a candidate, so ties break by id
            threshold = np.partition(values, size - n)[size - n]
            rows = np.flatnonzero(values >= threshold)
        else:
            rows = np.arange(size)
        rows = rows[np.lexsort((rows, -values[rows]))][:n]  # rows are in id order: ids are sorted
        return [self.ids[i] for i in rows]

    def plus(self, other: Mapping[str, float], weight: float, own_weight: float = 1.0) -> "ScoreTable | None":
        """``own_weight * self + weight * other`` over the same ids, or ``None`` when ``other``
        has an id this table lacks (the caller then falls back to dicts)."""
        extra = np.zeros(len(self.ids), dtype=np.float64)
        for key, value in other.items():
            row = self.position.get(key)
            if row is None:
                return None
            extra[row] = value
        return ScoreTable(self.ids, own_weight * self.scores + weight * extra, self.position)


def top_ids(scores: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` best ids by (-score, id); partial selection for a ``ScoreTable``."""
    if isinstance(scores, ScoreTable):
        return scores.top(n)
    return [c for c, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


_last_match: tuple[Any, Any, bool] = (None, None, False)


def same_ids(a: ScoreTable, b: ScoreTable) -> bool:
    """Whether two tables hold the same ids in the same order (the last answer is kept: the id
    lists of a store's tables live as long as the store is unchanged)."""
    global _last_match
    first, second, same = _last_match
    if first is a.ids and second is b.ids:
        return same
    same = a.ids is b.ids or (len(a.ids) == len(b.ids) and list(a.ids) == list(b.ids))
    _last_match = (a.ids, b.ids, same)
    return same
