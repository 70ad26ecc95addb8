"""The clients of ``bench_serve_load.py``: made-up documents from a seeded generator, and one client
thread's mixed operations (queries in every mode, inserts, re-inserts, deletes) against
``minirag serve``, recording what the server acknowledged and how long each kind took.

Each client writes only ids of its own (``c<client>-d<n>``), one request at a time, so the last
acknowledged write of an id is the state the index must hold for it afterwards."""

from __future__ import annotations

import random
import time
from collections import defaultdict
from dataclasses import dataclass, field

import httpx

NAMES = ["Orvella", "Tamsk", "Queblin", "Marrowitz", "Ysolde", "Brannoc", "Feluna", "Koddrick", "Pellam",
         "Zirra", "Hobbin", "Vantrel"]
PLACES = ["Gloamfield", "the Tessary", "Port Wendle", "Ashcombe market", "the Quillmere docks", "Dunmarrow"]
THINGS = ["a brass lantern", "the grain ledger", "a cracked bell", "seven blue crates", "the ferry schedule",
          "a map of the marsh", "the orchard lease", "a clockwork finch"]
VERBS = ["repaired", "sold", "borrowed", "painted", "lost", "found", "delivered", "measured"]
WHEN = ["on Tuesday", "before the storm", "at dawn", "after the harvest fair", "last winter", "yesterday"]
QUERY_MODES = ("mini", "light", "naive")


def sentence(rng: random.Random) -> str:
    return (f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(THINGS)} in {rng.choice(PLACES)} "
            f"{rng.choice(WHEN)}, and {rng.choice(NAMES)} was there.")


def document_text(rng: random.Random, sentences: int) -> str:
    return " ".join(sentence(rng) for _ in range(sentences))


def question(rng: random.Random) -> str:
    return rng.choice([f"What did {rng.choice(NAMES)} do in {rng.choice(PLACES)}?",
                       f"Who {rng.choice(VERBS)} {rng.choice(THINGS)}?",
                       f"Where was {rng.choice(THINGS)} {rng.choice(VERBS)}?"])


@dataclass
class ClientLog:
    """What one client saw: latencies per operation kind, the acknowledged state of its ids
    (text, or None once deleted), ids left unknown by a failed write, and non-200 answers."""

    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    acknowledged: dict[str, str | None] = field(default_factory=dict)
    uncertain: set[str] = field(default_factory=set)
    server_errors: list[str] = field(default_factory=list)
    other_errors: list[str] = field(default_factory=list)


def pick_operation(rng: random.Random, present: list[str]) -> str:
    """Half queries, a quarter inserts, an eighth each re-inserts and deletes (of an own id present)."""
    roll = rng.random()
    if roll < 0.5:
        return f"query_{QUERY_MODES[int(roll * 6)]}"
    if roll < 0.75 or not present:
        return "insert"
    return "reinsert" if roll < 0.875 else "delete"


def request_for(kind: str, rng: random.Random, client: int, serial: int, present: list[str]) -> tuple[str, dict]:
    if kind.startswith("query_"):
        return "/query", {"question": question(rng), "mode": kind.removeprefix("query_"), "k": 5}
    if kind == "delete":
        return "/delete", {"ids": [rng.choice(present)]}
    doc_id = rng.choice(present) if kind == "reinsert" else f"c{client}-d{serial}"
    return "/insert", {"documents": [{"id": doc_id, "text": document_text(rng, rng.randint(2, 5))}]}


def run_client(url: str, headers: dict[str, str], client: int, ops: int, seed: int, timeout: float,
               stop_at: float = float("inf")) -> ClientLog:
    """``ops`` mixed operations in sequence (fewer if ``time.monotonic()`` passes ``stop_at``);
    every write's outcome is recorded against its id."""
    rng = random.Random(seed * 1000 + client)
    log, present = ClientLog(), []
    with httpx.Client(base_url=url, headers=headers, timeout=timeout) as http:
        for serial in range(ops):
            if time.monotonic() > stop_at:
                break
            kind = pick_operation(rng, present)
            path, body = request_for(kind, rng, client, serial, present)
            ids = body.get("ids") or [d["id"] for d in body.get("documents", [])]
            start = time.perf_counter()
            try:
                reply = http.post(path, json=body)
            except httpx.HTTPError as exc:  # no answer: the write may or may not have happened
                log.other_errors.append(f"{kind}: {type(exc).__name__}: {exc}")
                log.uncertain.update(ids if path != "/query" else ())
                continue
            log.latencies_ms[kind].append((time.perf_counter() - start) * 1000)
            if reply.status_code != 200:
                (log.server_errors if reply.status_code >= 500 else log.other_errors).append(
                    f"{kind} {ids}: {reply.status_code} {reply.text[:300]}")
                log.uncertain.update(ids if path != "/query" else ())
                continue
            if path == "/insert":
                log.acknowledged[ids[0]] = body["documents"][0]["text"]
                log.uncertain.discard(ids[0])
                if ids[0] not in present:
                    present.append(ids[0])
            elif path == "/delete":
                log.acknowledged[ids[0]] = None
                log.uncertain.discard(ids[0])
                present.remove(ids[0])
    return log
