"""``MiniRAGIndex(worker_backend="ray")``: each batch's extraction and embedding as a Ray task on
the cluster ``ray.init()`` reaches (``RAY_ADDRESS``, or a local one it starts); the calling process
stays the one writer, to the stores the index was opened with (FalkorDB and a Chroma server for a
cluster: see ``docs/scale_out.md``). Needs the ``ray`` extra."""

from __future__ import annotations

from typing import Any, Callable

from minirag_core.indexing.workers import Prepared, prepare_in_worker
from minirag_core.types import Chunk

#: CPUs a task asks for; torch in the task uses as many threads
TASK_CPUS = 1


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('worker_backend="ray" needs Ray: pip install "minirag-integrations[ray]"') from exc
    return ray


class RayPool:
    """Batches as Ray tasks; the extractor and embedder go to the object store once."""

    def __init__(self, payload: bytes) -> None:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(log_to_driver=False)
        self._ray = ray
        self._payload = ray.put(payload)
        self._task = ray.remote(num_cpus=TASK_CPUS, max_retries=2)(prepare_in_worker)

    def submit(self, chunks: list[Chunk]) -> Callable[[], Prepared]:
        ref = self._task.remote(self._payload, TASK_CPUS, chunks)
        return lambda: self._ray.get(ref)

    def close(self) -> None:
        pass
