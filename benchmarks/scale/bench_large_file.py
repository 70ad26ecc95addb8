"""Index one large generated text file through the CLI: wall time, peak memory, progress.

    .venv/bin/python benchmarks/scale/bench_large_file.py --mb 20

Writes benchmarks/out/large_file.json. The text is generated (varied sentences about made-up
people, places and organisations), so the graph does not collapse onto a few entities.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "out"
SYLLABLES = ["ka", "lo", "mi", "ren", "sa", "tor", "vi", "bel", "dan", "eru", "fo", "gil", "hal", "ist", "jun"]


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


FILLER = ["the report describes how the work was planned and what changed over the year",
          "most of the measurements were repeated twice to check the results",
          "the team kept notes in a shared folder so that nothing was lost",
          "several readers asked for a shorter summary of the main points",
          "the second part explains the method in more detail",
          "costs stayed close to the budget for the whole period"]


def generate(path: Path, megabytes: float, seed: int = 7) -> int:
    """Ordinary report-like prose: mostly common words, a name or two per sentence."""
    rng = random.Random(seed)
    people = [f"{_name(rng)} {_name(rng)}" for _ in range(400)]
    places = [_name(rng) + rng.choice(["ville", " City", "burg", " Harbour"]) for _ in range(150)]
    orgs = [_name(rng) + rng.choice([" Institute", " Company", " Council", " University"]) for _ in range(100)]
    verbs = ["founded", "visited", "joined", "directed", "studied at", "wrote about", "moved to", "funded"]
    target = int(megabytes * 1_000_000)
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        while written < target:
            sentences = []
            for _ in range(rng.randint(4, 9)):
                if rng.random() < 0.4:
                    sentences.append(f"{rng.choice(people)} {rng.choice(verbs)} {rng.choice(orgs + places)} "
                                     f"in {rng.randint(1900, 2025)}.")
                else:
                    sentences.append(rng.choice(FILLER).capitalize() + ".")
            paragraph = " ".join(sentences) + "\n\n"
            handle.write(paragraph)
            written += len(paragraph.encode("utf-8"))
    return written


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0)
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "large"
        folder.mkdir()
        size = generate(folder / "large.txt", args.mb)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
        command = ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "minirag_core.interfaces.cli", "index", str(folder),
                   "--workdir", str(Path(tmp) / "wd")]
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
    progress_updates = done.stderr.count("indexing:")
    peak_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
    result = {"bytes": size, "seconds": round(seconds, 1), "peak_rss_mb": round(peak_mb), "exit": done.returncode,
              "progress_updates": progress_updates, "summary": done.stdout.strip().splitlines()[-1:]}
    (OUT / "large_file.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
