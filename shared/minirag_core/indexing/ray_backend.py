"""``MiniRAGIndex(worker_backend="ray")``: each batch's extraction and embedding as a Ray task on
the cluster ``ray.init()`` reaches (``RAY_ADDRESS``, or a local one it starts); the calling process
stays the one writer, to the stores the index was opened with (FalkorDB and a Chroma server for a
cluster: see ``docs/scale_out.md``). Needs the ``ray`` extra."""

from __future__ import annotations

from typing import Any

from minirag_core.indexing.worker_tasks import Prepared, init_worker, prepare_in_worker
from minirag_core.types import Chunk

#: CPUs a task asks for; torch in the task uses as many threads
TASK_CPUS = 1


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ImportError('worker_backend="ray" needs Ray: pip install "minirag-integrations[ray]"') from exc
    return ray


def _prepare_task(key: str, state_ref: list[Any], chunks: list[Chunk], index_relations: bool) -> Prepared:
    """A task: this worker keeps the extractor and embedder of ``state_ref`` (fetched once per
    worker process and pool, by the object's id), then prepares ``chunks``."""
    init_worker(key, _ray().get(state_ref[0]), TASK_CPUS)
    return prepare_in_worker(key, chunks, index_relations)


class _Task:
    """A submitted task, as a future: ``result`` waits for it, ``cancel`` drops it."""

    def __init__(self, ray: Any, ref: Any) -> None:
        self._ray, self._ref = ray, ref

    def result(self) -> Prepared:
        return self._ray.get(self._ref)

    def done(self) -> bool:
        ready, _ = self._ray.wait([self._ref], timeout=0)
        return bool(ready)

    def cancel(self) -> None:
        self._ray.cancel(self._ref)


class RayPool:
    """Batches as Ray tasks; the extractor and embedder go to the object store once per pool,
    which an index keeps for its life."""

    def __init__(self, state: tuple[Any, Any]) -> None:
        ray = _ray()
        if not ray.is_initialized():
            ray.init(log_to_driver=False)
        self._ray = ray
        ref = ray.put(state)
        self._key, self._state = f"ray-{ref.hex()}", [ref]  # in a list: handed on, not resolved, per task
        self._task = ray.remote(num_cpus=TASK_CPUS, max_retries=2)(_prepare_task)

    def submit(self, chunks: list[Chunk], index_relations: bool) -> _Task:
        return _Task(self._ray, self._task.remote(self._key, self._state, chunks, index_relations))

    def close(self) -> None:
        self._state.clear()  # the object store may free the models
