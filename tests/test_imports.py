"""Package hygiene and layout: every module imports first in a fresh interpreter, the import
graph (read from the code) has no cycle, each part of the core imports only the parts its
``__init__`` allows, no module passes 400 lines, and few modules sit at the core's top."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = {"minirag_core": REPO / "shared" / "minirag_core",
            "llama_index_minirag": REPO / "llama_index_minirag",
            "langchain_minirag": REPO / "langchain_minirag"}
MAX_LINES = 400
#: being rewritten elsewhere; the size test fails strictly once it fits


def _modules() -> list[tuple[str, Path]]:
    found = []
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found.append((".".join([package, *parts]), path))
    return found


MODULES = _modules()


def _import_alone(module: str) -> tuple[str, int, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "shared"), str(REPO)]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=300)
    return module, done.returncode, done.stderr[-2000:]


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    assert len(MODULES) > 40
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_import_alone, [m for m, _ in MODULES]))
    failed = {m: err for m, code, err in results if code != 0}
    assert not failed, "\n\n".join(f"{m}:\n{err}" for m, err in failed.items())


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _too_long() -> dict[str, int]:
    out = {}
    for package, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            name = f"{package}/{path.relative_to(root).as_posix()}"
            if _line_count(path) > MAX_LINES:
                out[name] = _line_count(path)
    return out


def test_no_module_passes_400_lines() -> None:
    assert not _too_long()


# --- the layout: imports computed from the code (module top level, ``TYPE_CHECKING`` blocks aside) ---

MAX_TOP_MODULES = 10
#: what each part of ``minirag_core`` may import (its ``__init__`` says the same in words)
TOP = {"types", "context", "scores", "concurrency"}
MAY_IMPORT = {
    "types": {"context"}, "context": set(), "scores": set(), "concurrency": {"scores"},
    "graph": {"types"},
    "embedding": {"scores", "types"},
    "llm": {"types", "context"},
    "storage": {"graph", "types", "context"},
    "extraction": {"graph", "embedding", "llm"} | TOP,
    "search": {"storage", "embedding", "extraction", "graph"} | TOP,
    "retrieval": {"graph", "storage", "search", "extraction", "embedding", "llm"} | TOP,
    "indexing": {"graph", "storage", "search", "extraction", "embedding", "llm", "retrieval"} | TOP,
    "interfaces": {"graph", "storage", "search", "extraction", "embedding", "llm", "retrieval", "indexing"} | TOP,
}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _statements(tree: ast.Module, deferred: bool) -> list[ast.AST]:
    """The module's top-level statements, or (``deferred``) every statement, those inside
    functions too, except under ``if TYPE_CHECKING``."""
    if not deferred:
        return [node for node in tree.body if not _is_type_checking(node)]
    skipped = {id(n) for node in ast.walk(tree) if _is_type_checking(node) for n in ast.walk(node)}
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def _imported(module: str, path: Path, known: set[str], deferred: bool = False) -> set[str]:
    """The project modules ``module`` imports when it is imported (top-level statements), or
    (``deferred``) at any point, an import inside a function included."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _statements(ast.parse(path.read_text(encoding="utf-8")), deferred):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: None if is_package else -1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def _import_graph(deferred: bool = False) -> dict[str, set[str]]:
    known = {m for m, _ in MODULES}
    return {m: _imported(m, path, known, deferred) for m, path in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle, or ``[]`` (depth-first search for a back edge)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_the_import_graph_of_the_three_packages_has_no_cycle() -> None:
    graph = _import_graph()
    assert sum(len(v) for v in graph.values()) > 100  # the graph was really read
    assert not _cycle(graph), " -> ".join(_cycle(graph))


def test_no_cycle_either_through_imports_deferred_into_functions() -> None:
    """A function-level import that closes a loop is a cycle too, only one found later."""
    graph = _import_graph(deferred=True)
    assert sum(len(v) for v in graph.values()) > sum(len(v) for v in _import_graph().values())
    assert not _cycle(graph), " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "minirag_core" and len(parts) > 1 else parts[0]


def test_each_part_of_the_core_imports_only_what_its_init_allows() -> None:
    broken = []
    for module, targets in _import_graph().items():
        if not module.startswith("minirag_core."):
            continue
        for target in targets:
            if not target.startswith("minirag_core.") or _part(target) == _part(module):
                continue
            if _part(target) not in MAY_IMPORT[_part(module)]:
                broken.append(f"{module} -> {target}")
    assert not broken, "\n".join(broken)


def test_the_core_keeps_few_modules_at_its_top() -> None:
    root = PACKAGES["minirag_core"]
    top = sorted(p.stem for p in root.glob("*.py") if p.stem != "__init__")
    assert len(top) <= MAX_TOP_MODULES, top
    assert set(top) == TOP, "a new top-level module needs a place in MAY_IMPORT"
    packages = sorted(p.name for p in root.iterdir() if (p / "__init__.py").exists())
    assert set(packages) == set(MAY_IMPORT) - TOP


def test_every_core_package_says_what_it_owns_and_may_import() -> None:
    for init in PACKAGES["minirag_core"].glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "May import" in doc or "may import" in doc, init


def test_the_public_api_imports_from_the_core_package() -> None:
    code = ("import minirag_core as m; "
            "[getattr(m, n) for n in m.__all__]; "
            "assert {'MiniRAGIndex', 'RetrievalSettings', 'RetrievalResult', 'GraphStore', 'VectorStore', "
            "'Embedder', 'Extractor', 'LLMBackend'} <= set(m.__all__)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
