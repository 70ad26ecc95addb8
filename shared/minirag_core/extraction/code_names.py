"""Code identifiers as entities: the name an inline code span stands for, and the names a fenced
code block defines, imports or calls (Python's ``ast`` where the block parses, a conservative
identifier pattern otherwise). Builtins and everyday method names are left out: they name no
API a reader would ask about."""

from __future__ import annotations

import ast
import builtins
import re

CODE = "CODE"
ERROR = "ERROR"
DEFINES, IMPORTS, CALLS = "defined", "imported", "called"

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_SPAN_NAME = re.compile(rf"^@?({_IDENT}(?:\.{_IDENT})*)\s*(?:\(.*\)|\[.*\])?\s*:?$", re.S)
_ERROR_NAME = re.compile(r"(?:Error|Exception|Warning)$")
_DEFINITION = re.compile(rf"\b(?:def|class|fn|func|function|struct|interface|trait|type|enum)\s+({_IDENT})")
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+([\w., \t]+)$|^[ \t]*(?:use|require)[ \t]+([\w:.]+)", re.M)
_ATTRIBUTE_CALL = re.compile(rf"\.({_IDENT})\s*\(")
_COMMON = frozenset(dir(builtins)) | {
    "self", "cls", "append", "extend", "get", "items", "keys", "values", "update", "pop", "join", "split",
    "format", "strip", "lower", "upper", "replace", "startswith", "endswith", "copy", "add", "remove",
    "read", "write", "open", "close", "main", "run", "log", "info", "debug", "warning", "error", "test",
}
MAX_BLOCK_NAMES = 16


def code_kind(name: str) -> str:
    """ERROR for exception-shaped names (``ValidationError``), else CODE."""
    return ERROR if _ERROR_NAME.search(name.rsplit(".", 1)[-1]) and name[:1].isupper() else CODE


_CODE_SHAPE = re.compile(rf"^{_IDENT}$")


def is_code_shaped(name: str) -> bool:
    """Whether a name is written as an identifier no prose word is: one token with an inner
    underscore (``FEED_URI``, ``model_dump``), a dot between identifiers (``Model.model_dump``) or
    a lower-to-upper case change (``fieldValidator``, ``BaseModel``)."""
    text = name.strip()
    parts = text.split(".")
    if not text or not all(_CODE_SHAPE.match(p) and len(p) > 1 for p in parts):
        return False
    return len(parts) > 1 or "_" in text.strip("_") or bool(re.search(r"[a-z][A-Z]", text))


def span_name(raw: str) -> str | None:
    """The identifier an inline code span names: ``@field_validator`` -> ``field_validator``,
    ``Model.model_dump()`` -> ``Model.model_dump``, ``Field(strict=True)`` -> ``Field``; None for
    literals, shell commands and expressions that name nothing on their own."""
    text = raw.strip().strip("`").strip()
    m = _SPAN_NAME.match(text)
    if not m or len(m.group(1)) < 2 or m.group(1) in ("True", "False", "None"):
        return None
    return m.group(1)


def _python_names(source: str) -> list[tuple[str, str]] | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, DEFINES))
            found += [(d.id, CALLS) for d in node.decorator_list if isinstance(d, ast.Name)]
        elif isinstance(node, ast.ImportFrom):
            found += [(a.name, IMPORTS) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Import):
            found += [(a.name, IMPORTS) for a in node.names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            found.append((node.func.attr, CALLS))
    return found


def _pattern_names(source: str) -> list[tuple[str, str]]:
    found = [(m.group(1), DEFINES) for m in _DEFINITION.finditer(source)]
    for m in _IMPORT.finditer(source):
        for part in re.split(r"[,\s]+", m.group(1) or m.group(2) or ""):
            if part and part != "as":
                found.append((part.split("::")[-1], IMPORTS))
    found += [(m.group(1), CALLS) for m in _ATTRIBUTE_CALL.finditer(source)]
    return found


def block_names(source: str, lang: str = "") -> list[tuple[str, str]]:
    """(name, role) for what a code block defines, imports and calls, first role per name,
    imports and definitions first; at most :data:`MAX_BLOCK_NAMES`."""
    found = _python_names(source) if lang in ("", "py", "python", "python3", "pycon") else None
    if found is None:
        found = _pattern_names(source)
    order = {IMPORTS: 0, DEFINES: 1, CALLS: 2}
    seen: dict[str, str] = {}
    for name, role in sorted(found, key=lambda nr: order[nr[1]]):
        if len(name) < 3 or name in _COMMON or name.startswith("__") or name in seen:
            continue
        seen[name] = role
    return list(seen.items())[:MAX_BLOCK_NAMES]


def line_of(source: str, name: str) -> str:
    """The first line of the block that names ``name`` (its context in a description)."""
    return next((line.strip() for line in source.splitlines() if re.search(rf"\b{re.escape(name)}\b", line)), "")


__all__ = ["CODE", "ERROR", "block_names", "code_kind", "is_code_shaped", "line_of", "span_name"]
