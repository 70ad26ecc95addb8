"""``bridge_local_pool`` for concentrated entities only: an entity's mentions among the query's P most
relevant chunks leave its count only when at least half of its mentions are there (the query's topic,
as the soap opera every relevant character's passage names); an entity mentioned mostly elsewhere (a
page name spread over a documentation site) keeps its whole count. Suggested by a test-half miss
(scrapy sc-002, a page reached through an entity of 17 chunks, 7 of them relevant).

Runs ``sweep_all_sets.py`` with ``outside_counts`` replaced (same arguments)::

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/experiments/tried/local_pool_concentrated.py \\
        --out DIR --setting '{"bridge_local_pool": 30}'
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.experiments import sweep_all_sets  # noqa: E402
from minirag_core.retrieval.extensions import bridge_arrays  # noqa: E402


def _concentrated(counts: np.ndarray, local: np.ndarray) -> np.ndarray:
    kept = np.where(2 * local >= counts, local, 0)
    return np.where(counts > 0, np.maximum(counts - kept, 1), counts)


if __name__ == "__main__":
    bridge_arrays.outside_counts = _concentrated
    sweep_all_sets.main()
