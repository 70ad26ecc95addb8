"""The ``k`` nearest rows picked through a sampled cut-off are those a full partition picks."""

from __future__ import annotations

import numpy as np

from minirag_core.search.vectors import _top_rows


def _by_partition(ids: list[str], found: np.ndarray, k: int) -> list[tuple[str, float, dict]]:
    top = np.argpartition(-found, min(k, len(ids)) - 1)[:k]
    top = top[np.lexsort((top, -found[top]))]
    return [(ids[i], float(found[i]), {}) for i in top]


def test_sampled_cut_off_picks_what_the_partition_picks() -> None:
    rng = np.random.default_rng(11)
    for trial in range(400):
        n = int(rng.integers(1, 3000))
        if trial % 3 == 0:  # many ties, some at the k-th value
            found = rng.integers(0, 6, n).astype(np.float32) / 5
        else:
            found = rng.standard_normal(n).astype(np.float32)
        if trial % 7 == 0:
            found[rng.integers(0, n, 3)] = np.nan
        ids = [f"e{i}" for i in range(n)]
        k = int(rng.integers(1, 12))
        assert repr(_top_rows(ids, found, k)) == repr(_by_partition(ids, found, k))
