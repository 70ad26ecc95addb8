"""What an extractor *is*, as a digest that keys its cached extractions: the code and data of
its rules (source text and module-level word lists, patterns and tables, read when asked, so
an edited or patched list counts), the models it runs and its settings. A changed extractor
misses the cache and extracts again; an unchanged one gets the same key in every process
(``hashlib`` over canonical JSON, never Python's randomised ``hash``)."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable

_NOT_DATA = object()


def _canonical(value: Any) -> Any:
    """JSON-ready form of plain data (sets sorted); ``_NOT_DATA`` for anything else."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, re.Pattern):
        return ["re", value.pattern, value.flags]
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        items = list(value.items()) if isinstance(value, dict) else list(value)
        out = [_canonical(list(v) if isinstance(v, tuple) else v) for v in items]
        if any(v is _NOT_DATA for v in out):
            return _NOT_DATA
        if isinstance(value, (set, frozenset, dict)):
            out.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return out
    return _NOT_DATA


@functools.lru_cache(maxsize=None)
def _source_digest(path: str, mtime_ns: int) -> str:
    """Digest of a module's code (its syntax tree: comments and layout do not count)."""
    tree = ast.dump(ast.parse(Path(path).read_text(encoding="utf-8")), annotate_fields=False)
    return hashlib.sha256(tree.encode("utf-8")).hexdigest()


def module_digest(module: ModuleType) -> str:
    """Digest of a module's code and of its constants as they are now (``NAME = {...}``)."""
    path = getattr(module, "__file__", None)
    parts: list[Any] = [module.__name__]
    if path:
        parts.append(_source_digest(path, Path(path).stat().st_mtime_ns))
    for name in sorted(vars(module)):
        if name.startswith("__") or not name.lstrip("_").isupper():
            continue
        data = _canonical(getattr(module, name))
        if data is not _NOT_DATA and data not in ([], "", None):  # runtime caches (a model, typers) start empty
            parts.append([name, data])
    return digest(parts)


def digest(parts: Iterable[Any]) -> str:
    """Stable 16-hex digest of JSON-ready ``parts``."""
    text = json.dumps(list(parts), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cache_identity(extractor: Any) -> str:
    """The key an extractor's results are cached under: its ``identity`` if it has one
    (a digest of rules, models and settings), else its ``name``."""
    return str(getattr(extractor, "identity", None) or extractor.name)


__all__ = ["cache_identity", "digest", "module_digest"]
