"""A real small model answering the benchmarks' prompts (llama.cpp, one thread), and what the
model runs share: gold answers, the command line and the JSON report written as they go."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable

from benchmarks.common import DEFAULT_OUT, configure_threads, git_commit, machine_info
from benchmarks.quality import devsets
from benchmarks.quality.answer_accuracy import ANSWER_STOPS, default_model
from benchmarks.quality.answer_scoring import answer_correct, token_f1
from benchmarks.quality.session_chains import RESULTS_DIR


class Answerer:
    """Gemma (or any GGUF) through the project's llama.cpp backend, one thread."""

    def __init__(self, spec: str | None, n_ctx: int, max_new_tokens: int) -> None:
        from minirag_core.llm.llamacpp_backend import LlamaCppBackend

        style, _, path = (spec or f"llamacpp:{default_model()}").partition(":")
        self.backend = LlamaCppBackend(path, prompt_style="chat" if style == "llamacpp-chat" else "completion",
                                       n_ctx=n_ctx, max_tokens=max_new_tokens, stop=ANSWER_STOPS, n_threads=1)
        self.model = Path(path).name

    def count(self, text: str) -> int:
        return len(self.backend.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def cached_prefix(self, prompt: str) -> int:
        """Tokens of ``prompt`` llama.cpp still holds from its last call (it evaluates the rest)."""
        llama = self.backend.llama
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        held = list(llama._input_ids[: llama.n_tokens]) if llama.n_tokens else []
        same = 0
        for a, b in zip(held, tokens):
            if a != b:
                break
            same += 1
        return same

    def answer(self, prompt: str, gold: list[str] | None) -> dict:
        from minirag_core.llm.usage import metered

        cached = self.cached_prefix(prompt)
        start = time.perf_counter()
        with metered() as usage:
            reply = self.backend.complete(prompt)
        seconds = time.perf_counter() - start
        record = {"reply": reply, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                  "prompt_tokens_evaluated": max(usage.prompt_tokens - cached, 0), "seconds": seconds}
        if gold:
            record.update(correct=answer_correct(reply, gold), f1=token_f1(reply, gold))
        return record


def gold_answers(data: devsets.Dataset) -> dict[str, list[str]]:
    """A question's text -> its gold answer and aliases (questions with an answer)."""
    return {q.question: [q.answer, *q.answer_aliases] for q in data.questions if q.answer.strip() and q.type != "Null"}


def printed_table(table: Callable[[dict], str]) -> bool:
    """With ``--table FILE`` as the arguments: print that report's table and say so."""
    if sys.argv[1:2] != ["--table"]:
        return False
    print(table(json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))))
    return True


def model_run_parser(description: str, sets: tuple[str, ...], unit: str) -> argparse.ArgumentParser:
    """The options every model run takes (``unit``: what ``--resume`` keeps and ``--limit-<unit>``
    caps per set, e.g. "chains")."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--llm", default=None, help="llamacpp:PATH or llamacpp-chat:PATH (default: Gemma 3 270M)")
    p.add_argument("--sets", default=",".join(sets))
    p.add_argument(f"--limit-{unit}", type=int, default=None, help=f"at most this many {unit} per set")
    p.add_argument("--token-budget", type=int, default=300, help="chunk-text tokens per query (retrieval budget)")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--n-ctx", type=int, default=8192)
    p.add_argument("--index-out", type=Path, default=DEFAULT_OUT, help="where the indexes are built and reused")
    p.add_argument("--report", type=Path, default=None, help="the JSON report (default: results/sessions/)")
    p.add_argument("--resume", action="store_true", help=f"keep the {unit} the report holds, answer the rest")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the embedding model")
    return p


def start_run(args: argparse.Namespace, name: str) -> tuple[Answerer, Path, dict]:
    """The model, the report's path (``results/sessions/<name>_<model>.json`` unless given) and the
    report, holding the sets of the file there with ``--resume``."""
    configure_threads(args.threads)
    answerer = Answerer(args.llm, args.n_ctx, args.max_new_tokens)
    path = args.report or RESULTS_DIR / f"{name}_{Path(answerer.model).stem}.json"
    report: dict = {"model": answerer.model, "commit": git_commit(), "args": {k: str(v) for k, v in vars(args).items()},
                    "machine": machine_info(), "sets": {}}
    if args.resume and path.exists():
        report["sets"] = json.loads(path.read_text(encoding="utf-8")).get("sets", {})
    path.parent.mkdir(parents=True, exist_ok=True)
    return answerer, path, report


def write_report(path: Path, report: dict) -> None:
    path.write_text(json.dumps(report, separators=(",", ":"), default=str), encoding="utf-8")


def finish_run(path: Path, report: dict, table: Callable[[dict], str]) -> dict:
    """Print the run's table and where its report is; the report."""
    print(table(report))
    print(f"wrote {path}")
    return report
