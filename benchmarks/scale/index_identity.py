"""Whether two checkouts build the same index: each run of ``save`` builds the first passages and
chat sessions in one process (``workers=1``) and keeps a digest of the graph and every vector
(``bench_ingest.index_state``); ``compare`` sets two such files side by side.

    (cd OLD && PYTHONPATH=shared:. python benchmarks/scale/index_identity.py save /tmp/old.pkl)
    (cd NEW && PYTHONPATH=shared:. python benchmarks/scale/index_identity.py save /tmp/new.pkl)
    PYTHONPATH=shared:. python benchmarks/scale/index_identity.py compare /tmp/old.pkl /tmp/new.pkl
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.scale.bench_ingest import compare_states, index_state, load_shape, new_embedder  # noqa: E402

SIZES = {"passages": 60, "chat": 20}


def save(out: Path, root: Path) -> None:
    from minirag_core.indexing.index import MiniRAGIndex

    states = {}
    for shape, count in SIZES.items():
        with tempfile.TemporaryDirectory(prefix="minirag-identity-") as tmp:
            index = MiniRAGIndex(Path(tmp) / "index", embedder=new_embedder(), workers=1)
            index.insert(load_shape(shape, root)[:count])
            states[shape] = index_state(index)
            index.close()
    out.write_bytes(pickle.dumps(states))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("save", "compare"))
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--data-root", type=Path, default=None)
    args = p.parse_args(argv)
    if args.action == "save":
        from benchmarks.quality import devsets

        save(args.files[0], args.data_root or devsets.DATA_ROOT)
        return
    old, new = (pickle.loads(f.read_bytes()) for f in args.files[:2])
    for shape in old:
        print(f"{shape} ({SIZES.get(shape)} documents): {compare_states(old[shape], new[shape])}")


if __name__ == "__main__":
    main()
