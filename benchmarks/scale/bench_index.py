"""Index a whole corpus (LiHuaWorld, or --set NAME) into a fresh temporary workdir and report its cost.

    .venv/bin/python benchmarks/scale/bench_index.py                       # embedded default, no model
    .venv/bin/python benchmarks/scale/bench_index.py --set hotpotqa_100    # another development set
    .venv/bin/python benchmarks/scale/bench_index.py --llm ollama:qwen2.5:3b --limit 20

Prints chunks, entities, relations, seconds in total and outside model calls, model calls
per chunk, index bytes on disk against corpus bytes, and the process's peak memory.
Without ``--llm`` no model is called: every second is "outside model calls".
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import configure_threads, dir_bytes, machine_info, make_llm, peak_rss_mb  # noqa: E402
from benchmarks.quality.lihuaworld import default_dir, load_corpus  # noqa: E402


class ActiveTimer:
    """Wall time during which at least one call is in flight (concurrent calls overlap)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._since = 0.0
        self.busy = 0.0
        self.calls = 0

    def enter(self) -> None:
        with self._lock:
            if self._active == 0:
                self._since = time.perf_counter()
            self._active += 1
            self.calls += 1

    def exit(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                self.busy += time.perf_counter() - self._since


class TimedLLM:
    """An LLMBackend wrapper that counts calls and the wall time spent waiting on the model."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name  # same cache key as the wrapped model
        self.timer = ActiveTimer()

    def complete(self, prompt: str, *, json_mode: bool = False) -> str:
        self.timer.enter()
        try:
            return self.inner.complete(prompt, json_mode=json_mode)
        finally:
            self.timer.exit()

    async def acomplete(self, prompt: str, *, json_mode: bool = False) -> str:
        self.timer.enter()
        try:
            return await self.inner.acomplete(prompt, json_mode=json_mode)
        finally:
            self.timer.exit()


class TimedEmbedder:
    """An Embedder wrapper that measures time spent in ``embed`` (the rest is forwarded)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self.timer = ActiveTimer()
        self.texts = 0

    def embed(self, texts):
        self.timer.enter()
        try:
            self.texts += len(texts)
            return self.inner.embed(texts)
        finally:
            self.timer.exit()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def token_windows(self, text: str, size: int, overlap: int) -> list[str]:
        return self.inner.token_windows(text, size, overlap)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=None, help="LiHuaWorld folder")
    p.add_argument("--set", default=None, help="another development set instead (devsets.py name, e.g. hotpotqa_100)")
    p.add_argument("--llm", default=None, help="ollama:MODEL[@host] for model-based extraction")
    p.add_argument("--limit", type=int, default=None, help="first N sessions only")
    p.add_argument("--keep", type=Path, default=None, help="index into this (new) folder and keep it")
    p.add_argument("--json", type=Path, default=None, help="also write the numbers to this JSON file")
    p.add_argument("--progress", action="store_true")
    p.add_argument("--threads", type=int, default=0,
                   help="torch intra-op threads (default 0: torch's own default, as a user's index runs)")
    args = p.parse_args(argv)
    configure_threads(args.threads)

    if args.set:
        from benchmarks.quality import devsets

        docs = devsets.load(args.set).documents
    else:
        docs = load_corpus(args.data.resolve() if args.data else default_dir())
    if args.limit:
        docs = docs[: args.limit]
    corpus_bytes = sum(len(d.text.encode("utf-8")) for d in docs)

    from minirag_core.indexing.index import MiniRAGIndex

    tmp = None
    if args.keep:
        if args.keep.exists() and any(args.keep.iterdir()):
            raise SystemExit(f"{args.keep} is not empty: bench_index measures a fresh build")
        workdir = args.keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix="minirag-bench-index-")
        workdir = Path(tmp.name) / "index"

    t0, cpu0 = time.perf_counter(), time.process_time()
    from minirag_core.embedding.sentence_transformer import SentenceTransformerEmbedder

    embedder = TimedEmbedder(SentenceTransformerEmbedder())
    t_model_load = time.perf_counter() - t0
    llm = TimedLLM(make_llm(args.llm)) if args.llm else None
    t1 = time.perf_counter()
    index = MiniRAGIndex(workdir, embedder=embedder, llm=llm, show_progress=args.progress)
    t2 = time.perf_counter()
    report = index.insert(docs)
    t3, cpu3 = time.perf_counter(), time.process_time()
    stats = index.stats()
    index_bytes = dir_bytes(workdir)

    total = t3 - t0
    model_seconds = llm.timer.busy if llm else 0.0
    model_calls = llm.timer.calls if llm else 0
    chunks = stats.get("chunks", 0)
    result = {
        "sessions": len(docs), "chunks": chunks, "entities": stats.get("entities"),
        "relations": stats.get("relations"), "mentions": stats.get("mentions"),
        "seconds_total": total, "seconds_embedding_model_load": t_model_load,
        "seconds_open_index": t2 - t1, "seconds_insert": t3 - t2, "cpu_seconds_total": cpu3 - cpu0,
        "chunks_per_second": chunks / total if total else None,
        "seconds_in_model_calls": model_seconds, "seconds_outside_model_calls": total - model_seconds,
        "seconds_in_embedding": embedder.timer.busy, "texts_embedded": embedder.texts,
        "model": llm.name if llm else None, "model_calls": model_calls,
        "model_calls_per_chunk": model_calls / chunks if chunks else 0.0,
        "unparsed_records": report.unparsed_records, "rejected": len(report.rejected),
        "index_bytes": index_bytes, "corpus_bytes": corpus_bytes,
        "index_to_corpus_ratio": index_bytes / corpus_bytes if corpus_bytes else None,
        "peak_rss_mb": peak_rss_mb(), "machine": machine_info(),
    }
    mode = f"model {llm.name}" if llm else "embedded default, no model"
    print(f"{args.set or 'LiHuaWorld'} whole-corpus index ({mode}), {len(docs)} documents, {corpus_bytes / 1e6:.2f} MB")
    print(f"  chunks                        {chunks}")
    print(f"  entities                      {stats.get('entities')}")
    print(f"  relations (entity-entity)     {stats.get('relations')}")
    print(f"  entity-chunk edges            {stats.get('mentions')}")
    print(f"  seconds total                 {total:.1f}  (embedding model load {t_model_load:.1f}, "
          f"open {t2 - t1:.1f}, insert {t3 - t2:.1f})")
    print(f"  CPU seconds (this process)    {cpu3 - cpu0:.1f}  (wall/CPU shows machine load); "
          f"{result['chunks_per_second'] or 0:.1f} chunks/s")
    print(f"  seconds outside model calls   {total - model_seconds:.1f}"
          + ("  (no model: all of it)" if not llm else f"  (in model calls {model_seconds:.1f})"))
    print(f"  seconds in embedding          {embedder.timer.busy:.1f}  ({embedder.texts} texts)")
    print(f"  model calls per chunk         {result['model_calls_per_chunk']:.2f}  ({model_calls} calls)")
    print(f"  index bytes on disk           {index_bytes / 1e6:.1f} MB = {result['index_to_corpus_ratio']:.1f}x "
          f"the corpus ({corpus_bytes / 1e6:.2f} MB)")
    print(f"  peak memory (ru_maxrss)       {result['peak_rss_mb']:.0f} MB")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, default=str))
    del index
    if tmp is not None:
        tmp.cleanup()
    return result


if __name__ == "__main__":
    main()
