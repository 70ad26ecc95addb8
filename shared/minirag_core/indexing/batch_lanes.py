"""An insert's batches through several lanes at once (a pool of worker processes, a thread of the
writer's own), written back in batch order: ``pipelined``."""

from __future__ import annotations

import time
from collections import deque
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Protocol, Sequence, TypeVar

from minirag_core.indexing.worker_tasks import Prepared
from minirag_core.types import Chunk, ExtractionResult

B = TypeVar("B")
#: seconds between looks at the lanes while none has room and the oldest batch is unfinished
POLL_SECONDS = 0.02


class Pending(Protocol):
    """A batch under way in a lane."""

    def result(self) -> Prepared: ...

    def done(self) -> bool: ...

    def cancel(self) -> Any: ...


class Lane(NamedTuple):
    """Where batches can go: ``submit`` starts one, at most ``capacity()`` unfinished at once (asked
    each time: a lane may open or close as the build goes)."""

    submit: Callable[[list[Chunk]], Pending]
    capacity: Callable[[], int]


def pipelined(batches: Iterable[B], chunks_of: Callable[[B], list[Chunk]],
              cached: Callable[[list[Chunk]], list[ExtractionResult | None]],
              store: Callable[[list[Chunk], list[ExtractionResult | None]], None],
              lanes: Sequence[Lane], ahead: int) -> Iterator[tuple[B, Prepared]]:
    """Each batch with its results, in order. ``cached`` gives each chunk's cached result (None:
    not cached); the chunks without one go to the first lane with room, and ``store`` caches what
    comes back. Each batch is yielded as soon as it and those before it are done; at most
    ``ahead`` batches wait to be yielded (when none may start, the writer waits for the lanes).
    Batches still under way when the writer stops (an error) are cancelled."""
    queue: deque[tuple[B, list[Chunk], list[ExtractionResult | None], list[int], Pending | None, int]] = deque()

    def finish() -> tuple[B, Prepared]:
        batch, chunks, found, missing, pending, _ = queue.popleft()
        prepared = pending.result() if pending is not None else Prepared([])
        for i, extraction in zip(missing, prepared.extractions):
            found[i] = extraction
        store([chunks[i] for i in missing], prepared.extractions)
        return batch, Prepared(found, prepared.vectors, prepared.pid, prepared.models_held)

    def head_done() -> bool:
        pending = queue[0][4]
        return pending is None or pending.done()

    def lane_with_room() -> int | None:
        if len(queue) >= ahead:
            return None
        busy = [0] * len(lanes)
        for *_, pending, lane in queue:
            if pending is not None and not pending.done():
                busy[lane] += 1
        return next((i for i, lane in enumerate(lanes) if busy[i] < lane.capacity()), None)

    try:
        for batch in batches:
            chunks = chunks_of(batch)
            found = cached(chunks)
            missing = [i for i, e in enumerate(found) if e is None]
            pending, lane = None, -1
            if missing:
                while (lane := lane_with_room()) is None:
                    if head_done():
                        yield finish()
                    else:
                        time.sleep(POLL_SECONDS)
                pending = lanes[lane].submit([chunks[i] for i in missing])
            queue.append((batch, chunks, found, missing, pending, lane))
            while queue and head_done():
                yield finish()
        while queue:
            yield finish()
    finally:
        for *_, pending, _ in queue:
            if pending is not None:
                pending.cancel()
