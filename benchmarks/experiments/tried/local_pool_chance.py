"""``bridge_local_pool`` with chance taken out: an entity's mentions among the query's P most
relevant chunks count as local only beyond what chance puts there (its N-chunk corpus count x P / N),
so on a small corpus, where a pool of P is a large share of the chunks, a hub keeps its damping.

Runs ``sweep_all_sets.py`` with ``outside_counts`` replaced (same arguments)::

    PYTHONPATH=$PWD/shared:$PWD python benchmarks/experiments/tried/local_pool_chance.py \\
        --out DIR --setting '{"bridge_local_pool": 30}'
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.experiments import sweep_all_sets  # noqa: E402
from minirag_core.retrieval.extensions import bridge_arrays  # noqa: E402

_share = {"value": 0.0}
_on_arrays = bridge_arrays.bridge_scores_on_arrays


def _tracking(*args, **kwargs):
    _share["value"] = kwargs.get("local_pool", 0) / max(kwargs["n_chunks"], 1)
    return _on_arrays(*args, **kwargs)


def _beyond_chance(counts: np.ndarray, local: np.ndarray) -> np.ndarray:
    excess = np.maximum(local - counts * _share["value"], 0.0)
    return np.where(counts > 0, np.maximum(counts - excess, 1.0), counts)


if __name__ == "__main__":
    bridge_arrays.bridge_scores_on_arrays = _tracking
    bridge_arrays.outside_counts = _beyond_chance
    sweep_all_sets.main()
