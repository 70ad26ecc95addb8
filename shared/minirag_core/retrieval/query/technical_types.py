"""Answer types of technical question shapes ("how do I ...", "what does X return", "why does X
fail"), proposed only when the graph holds entities of that type (a documentation site's code,
errors and section topics); on any other corpus they propose nothing."""

from __future__ import annotations

import re
from typing import Iterable

from minirag_core.extraction.code_names import CODE, ERROR
from minirag_core.extraction.entity_typing import CONCEPT

_RULES: list[tuple[re.Pattern[str], list[str]]] = [
    (re.compile(r"\bhow (?:do|can|could|should|would|does) (?:i|we|you|one)\b|\bhow to\b|\bis there a way\b"),
     [CODE, CONCEPT]),
    (re.compile(r"\bwhat (?:does|do|will|would|is) .{0,80}?\breturn(?:s|ed)?\b"), [CODE]),
    (re.compile(r"\bwhy (?:does|do|did|is|are|am|would|will)\b.{0,160}?\b(?:fail\w*|rais\w*|error\w*|exception\w*|"
                r"reject\w*|complain\w*|warn\w*)"), [ERROR, CODE]),
    (re.compile(r"\b(?:which|what) (?:function|method|class|decorator|parameter|argument|option|setting|"
                r"attribute|module|field|flag|hook|api)s?\b"), [CODE]),
    (re.compile(r"\b(?:error|exception|traceback)s?\b"), [ERROR]),
]
# a name written as code: in backticks, a decorator, a call, snake_case (or a trailing underscore),
# camelCase or CamelCase with an inner capital, a dotted attribute (read on the question as written)
_CODE_SHAPED = re.compile(r"`[^`\n]+`|(?<![\w@])@[A-Za-z_]\w*|\b[A-Za-z_]\w*\(|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|"
                          r"\b[a-z][a-z0-9]*_(?!\w)|\b[a-z]{2,}[A-Z]\w*|\b[A-Z][a-z0-9]{2,}[A-Z]\w*|\b[a-z_]\w+\.[a-z_]\w+\b")


def technical_types(query: str, available: Iterable[str]) -> list[str]:
    """Types the question's technical shape asks for, earliest cue first, among ``available``;
    none unless the graph holds code (CODE or ERROR entities): elsewhere "how do I" is no
    technical question."""
    pool = {t.upper(): t for t in available}
    if CODE not in pool and ERROR not in pool:
        return []
    q = query.lower()
    found: list[tuple[int, str]] = []
    for pattern, types in _RULES:
        m = pattern.search(q)
        if m:
            found += [(m.start(), t) for t in types]
    code = _CODE_SHAPED.search(query)
    if code:
        found.append((code.start(), CODE))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(pool[t] for _, t in found if t in pool))


__all__ = ["technical_types"]
