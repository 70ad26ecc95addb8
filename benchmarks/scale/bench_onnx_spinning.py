"""Whether ONNX Runtime's waiting threads should spin: the first N HotpotQA passages embedded as
an index's batches (``BertEncoder`` on ONNX Runtime, 16 at a time) on ``--threads`` intra-op
threads, with spinning allowed and not, interleaved; the vectors must be the same.

    PYTHONPATH=shared:. .venv/bin/python benchmarks/scale/bench_onnx_spinning.py --threads 2 --repeat 2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.common import machine_info  # noqa: E402
from benchmarks.scale.bench_ingest import load_shape  # noqa: E402


def encode_seconds(texts: list[str], threads: int, spinning: bool) -> tuple[float, np.ndarray]:
    """Seconds to embed ``texts`` with a fresh encoder whose waiting threads spin or sleep."""
    import onnxruntime

    from minirag_core.embedding import bert_encoder
    from minirag_core.embedding.sentence_transformer import bundled_model_path

    original = onnxruntime.SessionOptions

    class Options(original):  # type: ignore[misc, valid-type]
        def add_session_config_entry(self, key: str, value: str) -> None:
            if key != "session.intra_op.allow_spinning":
                super().add_session_config_entry(key, value)
            else:
                super().add_session_config_entry(key, "1" if spinning else "0")

    onnxruntime.SessionOptions = Options
    try:
        encoder = bert_encoder.BertEncoder(bundled_model_path(), 256, "onnxruntime", threads)
    finally:
        onnxruntime.SessionOptions = original
    encoder.encode(texts[:4], 16)  # warm
    start = time.perf_counter()
    vectors = encoder.encode(texts, 16)
    return time.perf_counter() - start, vectors


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--passages", type=int, default=100)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--data-root", type=Path, default=None)
    args = p.parse_args(argv)
    from benchmarks.quality import devsets

    texts = [d.text for d in load_shape("passages", args.data_root or devsets.DATA_ROOT)[: args.passages]]
    print(f"machine load {machine_info().get('load_average', '')}; {len(texts)} passages, {args.threads} threads")
    times: dict[bool, list[float]] = {True: [], False: []}
    vectors: dict[bool, np.ndarray] = {}
    for rep in range(args.repeat):
        for spinning in ((True, False) if rep % 2 == 0 else (False, True)):
            seconds, vectors[spinning] = encode_seconds(texts, args.threads, spinning)
            times[spinning].append(seconds)
            print(f"  spinning {'on ' if spinning else 'off'}: {seconds:.1f} s", flush=True)
    diff = float(np.abs(vectors[True] - vectors[False]).max())
    print(f"spinning on: min {min(times[True]):.1f} s; off: min {min(times[False]):.1f} s; "
          f"largest vector difference {diff:.1e}")


if __name__ == "__main__":
    main()
