"""Markdown read by its structure with markdown-it-py (a maintained CommonMark parser, the one
behind MyST and rich; pure Python, no C build), not by line regexes.

A page becomes blocks (headings, prose, code) that keep their source line numbers. Extensions
that CommonMark does not know are read by shape before parsing, one output line per input
line: a container marker (``!!! note``, ``??? tip "Title"``, ``=== "Tab"``) leaves its quoted
title as a line of text and its indented body is dedented (so it is read as prose, not as an
indented code block); heading and block attributes (``{ #id }``, ``{: .class }``), include
and macro lines (``--8<--``, ``{% ... %}``, ``{{ ... }}``, ``::: module.name``), a YAML front matter and reference
suffixes of links to API objects (``[text][target]``) are dropped. Fenced code is a code block:
it stays in the chunk text but is never parsed as prose.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

from minirag_core.types import HEADING_PATH_KEY

_CONTAINER = re.compile(r'^(\s*)(?:(?:!!!|\?\?\?\+?)\s*[\w-]+(?:\s+[\w-]+)*\s*(?:"([^"]*)")?|===\+?\s*"([^"]*)")\s*$')
_ATTRS = re.compile(r"\s*\{:?\s*[#.][^{}]*\}")
_DIRECTIVE = re.compile(r"^\s*(?:-{2}8<-{2}|\{%.*%\}\s*$|\{\{.*\}\}\s*$|:::\s+\S)")
_REF_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])+)\]\[[^\[\]\s]*\]")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)
PAGE_EXTENSIONS = (".md", ".markdown")
#: chunk metadata set by Markdown chunking: the heading path the chunk starts under, the page title
PAGE_TITLE_KEY = "page_title"


@dataclass
class Block:
    """One structural unit: ``heading`` (``level``, ``anchor``), ``text`` (prose, list item,
    table row, quoted title) or ``code`` (``lang``); ``line`` is its first source line."""

    kind: str
    text: str
    line: int
    level: int = 0
    lang: str = ""
    anchor: str = ""
    codes: list[tuple[int, int]] = field(default_factory=list)   # inline code spans (offsets in text)
    links: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, href)


def slug(title: str) -> str:
    """A heading's anchor as Markdown sites derive it: lower case, punctuation dropped, spaces -> ``-``."""
    text = unicodedata.normalize("NFKD", title).lower()
    text = re.sub(r"[^\w\s-]", "", text).strip()
    return re.sub(r"[\s]+", "-", text)


def prepare(text: str) -> str:
    """The page with non-CommonMark extensions neutralised, line for line (see the module doc)."""
    return _prepare(text)[0]


def _prepare(text: str) -> tuple[str, dict[int, str]]:
    """:func:`prepare`, and the container titles by line (each read as a paragraph of its own)."""
    out: list[str] = []
    titles: dict[int, str] = {}
    stack: list[int] = []  # body indents of the open containers
    in_fence = False
    lines = text.splitlines()
    end = _front_matter_end(lines)
    out += [""] * end
    for raw in lines[end:]:
        line = raw.expandtabs(4)
        indent = len(line) - len(line.lstrip())
        if line.strip() and not in_fence:
            while stack and indent < stack[-1]:
                stack.pop()
        line = line[min(stack[-1] if stack else 0, indent):] if line.strip() else ""
        if _FENCE_LINE.match(line):
            in_fence = not in_fence
        if in_fence or _FENCE_LINE.match(line):
            out.append(line)
            continue
        marker = _CONTAINER.match(line)
        if marker:
            stack.append(indent + 4)
            title = marker.group(2) or marker.group(3)
            if title and title.strip():
                titles[len(out)] = title.strip()
            out.append("")
            continue
        if _DIRECTIVE.match(line):
            out.append("")
            continue
        line = _ATTRS.sub("", line)
        out.append(_REF_LINK.sub(r"\1", line))
    return "\n".join(out), titles


def _front_matter_end(lines: list[str]) -> int:
    """Lines taken by a YAML front-matter block (``---`` ... ``---`` at the top), else 0."""
    if not lines or lines[0].strip() != "---":
        return 0
    closing = next((i for i, line in enumerate(lines[1:60], 1) if line.strip() in ("---", "...")), None)
    return closing + 1 if closing else 0


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _inline(token) -> tuple[str, list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Plain text of an inline token, with its code spans and links as offsets."""
    parts: list[str] = []
    codes: list[tuple[int, int]] = []
    links: list[tuple[int, int, str]] = []
    open_links: list[tuple[int, str]] = []
    size = 0
    for child in token.children or []:
        piece = ""
        if child.type == "text":
            piece = child.content
        elif child.type == "code_inline":
            piece = child.content
            codes.append((size, size + len(piece)))
        elif child.type in ("softbreak", "hardbreak"):
            piece = " "
        elif child.type == "link_open":
            open_links.append((size, str(child.attrs.get("href", ""))))
        elif child.type == "link_close" and open_links:
            start, href = open_links.pop()
            links.append((start, size, href))
        elif child.type == "image":
            piece = child.content
        parts.append(piece)
        size += len(piece)
    return "".join(parts), codes, links


def blocks(text: str) -> list[Block]:
    """The page's blocks in order (see :class:`Block`)."""
    out: list[Block] = []
    prepared, titles = _prepare(text)
    tokens = _parser().parse(prepared)
    row: Block | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "tr_open":
            row = Block("text", "", (tok.map or [0])[0])
        elif tok.type == "tr_close" and row is not None:
            if row.text.strip():
                out.append(row)
            row = None
        elif tok.type == "inline":
            plain, codes, links = _inline(tok)
            parent = tokens[i - 1] if i else None
            if row is not None:
                shift = len(row.text) + (2 if row.text else 0)
                row.text += ("; " if row.text else "") + plain
                row.codes += [(a + shift, b + shift) for a, b in codes]
                row.links += [(a + shift, b + shift, h) for a, b, h in links]
            elif parent is not None and parent.type == "heading_open":
                level = int(parent.tag[1:])
                out.append(Block("heading", plain.strip(), (tok.map or [0])[0], level=level, anchor=slug(plain),
                                 codes=codes, links=links))
            elif plain.strip():
                out.append(Block("text", plain, (tok.map or [0])[0], codes=codes, links=links))
        elif tok.type in ("fence", "code_block"):
            out.append(Block("code", tok.content, (tok.map or [0])[0], lang=tok.info.strip().split(" ")[0].lower()))
    _explicit_anchors(text, out)
    if titles:
        out = sorted(out + [Block("text", t, line) for line, t in titles.items()], key=lambda b: b.line)
    return out


def _explicit_anchors(text: str, found: list[Block]) -> None:
    """A heading's ``{ #id }`` attribute, where it has one, is its anchor."""
    lines = text.splitlines()
    for block in found:
        if block.kind == "heading" and block.line < len(lines):
            m = re.search(r"\{:?\s*#([\w-]+)[^{}]*\}\s*$", lines[block.line])
            if m:
                block.anchor = m.group(1)


def heading_paths(found: list[Block], page_title: str) -> list[list[str]]:
    """For each block, the headings above it (page title first): ``page › section › subsection``."""
    stack: list[tuple[int, str]] = []
    out: list[list[str]] = []
    for block in found:
        if block.kind == "heading":
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.text))
        path = [t for _, t in stack]
        out.append(path if path and stack[0][0] == 1 else [page_title, *path])
    return out


def page_title(found: list[Block], doc_id: str) -> str:
    """The first level-1 heading, else the page's file name in words (``getting_started.md`` ->
    ``Getting started``)."""
    first = next((b.text for b in found if b.kind == "heading" and b.level == 1 and b.text), None)
    if first:
        return first
    stem = posixpath.splitext(posixpath.basename(doc_id.rstrip("/")))[0] or doc_id
    if stem.lower() == "index":
        stem = posixpath.basename(posixpath.dirname(doc_id.rstrip("/"))) or "index"
    words = re.sub(r"[_-]+", " ", stem).strip()
    return words[:1].upper() + words[1:]


def page_key(doc_id: str) -> str:
    """A page's name in the graph: its path without the extension (``guide/install``)."""
    base, ext = posixpath.splitext(doc_id)
    return base if ext.lower() in PAGE_EXTENSIONS else doc_id


def link_target(doc_id: str, href: str) -> tuple[str, str] | None:
    """(page key, anchor) a relative link from page ``doc_id`` points to, or None for external
    links, links to non-page files and links within the page without an anchor."""
    href = href.strip()
    if not href or _EXTERNAL.match(href):
        return None
    path, _, anchor = href.partition("#")
    path = path.split("?", 1)[0]
    if not path:
        return (page_key(doc_id), anchor) if anchor else None
    if path.endswith("/"):
        path += "index.md"
    ext = posixpath.splitext(path)[1].lower()
    if ext and ext not in PAGE_EXTENSIONS:
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(doc_id), path)).lstrip("/")
    if target.startswith(".."):
        return None
    return page_key(target if ext else target + ".md"), anchor


__all__ = ["HEADING_PATH_KEY", "PAGE_TITLE_KEY", "Block", "blocks", "heading_paths", "link_target", "page_key",
           "page_title", "prepare", "slug"]
