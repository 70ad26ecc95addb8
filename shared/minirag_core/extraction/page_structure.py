"""A documentation page's structure, whatever its markup: Markdown (:mod:`.markdown`) or
reStructuredText (:mod:`.restructuredtext`), chosen by the page's file name. Both give the same
blocks, so chunking, heading paths, page titles and page links work alike for either."""

from __future__ import annotations

import posixpath

from minirag_core.extraction import markdown, restructuredtext
from minirag_core.extraction.markdown import Block

PAGE_EXTENSIONS = markdown.PAGE_EXTENSIONS + restructuredtext.PAGE_EXTENSIONS
#: chunk metadata: the page (key) of each ``:ref:`` label the chunk uses, where an indexed page defines it
REF_TARGETS_KEY = "ref_targets"


def label_pages(pages: dict[str, str]) -> dict[str, str]:
    """label -> page key for the ``.. _label:`` targets the reST pages (id -> text) define."""
    return {label.lower(): page_key(doc_id) for doc_id, text in pages.items() if is_restructuredtext(doc_id)
            for label in restructuredtext.labels(text)}


def used_labels(text: str, pages: dict[str, str]) -> dict[str, str]:
    """The part of ``pages`` (label -> page key) the chunk ``text`` refers to with ``:ref:``."""
    return {label: page for label in restructuredtext.referenced_labels(text) if (page := pages.get(label))}


def is_restructuredtext(name: str) -> bool:
    return str(name).lower().endswith(restructuredtext.PAGE_EXTENSIONS)


def blocks(text: str, name: str = "") -> list[Block]:
    """The page's blocks, read as reST when ``name`` is a reST file, else as Markdown."""
    return restructuredtext.blocks(text) if is_restructuredtext(name) else markdown.blocks(text)


def page_key(doc_id: str) -> str:
    """A page's name in the graph: its path without the page extension (``guide/install``)."""
    base, ext = posixpath.splitext(doc_id)
    return base if ext.lower() in PAGE_EXTENSIONS else doc_id


def link_target(doc_id: str, href: str, refs: dict[str, str] | None = None) -> tuple[str, str] | None:
    """(page key, anchor) a link from page ``doc_id`` points to, or None (see
    :func:`.markdown.link_target`). A reST ``:doc:`` target is a page path without extension,
    relative to the page (absolute from the site root when it starts with ``/``); a ``:ref:``
    label gives the page that defines it (``refs``: label -> page key), else None."""
    if not is_restructuredtext(doc_id):
        return markdown.link_target(doc_id, href)
    if href.startswith(restructuredtext.REF_PREFIX):
        label = href[len(restructuredtext.REF_PREFIX):].lower()
        return ((refs or {})[label], label) if label in (refs or {}) else None
    if markdown.link_target(doc_id, href) is None:
        return None
    path, _, anchor = href.strip().partition("#")
    base = "" if path.startswith("/") else posixpath.dirname(doc_id)
    target = posixpath.normpath(posixpath.join(base, path.lstrip("/")))
    if target.startswith(".."):
        return None
    return page_key(target), anchor


__all__ = ["PAGE_EXTENSIONS", "REF_TARGETS_KEY", "blocks", "is_restructuredtext", "label_pages", "link_target",
           "page_key", "used_labels"]
