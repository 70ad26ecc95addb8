"""reStructuredText read by its structure with docutils (the reference reST parser), into the
same :class:`~minirag_core.extraction.markdown.Block` list a Markdown page gives.

Sections (titles with an overline and underline, or an underline only) are headings, their level
the nesting depth. Roles and directives docutils does not know (Sphinx adds many) are read
generically, never as errors and never as markup left in the text: an interpreted-text role
``:name:`target``` or ``:name:`title <target>``` is an inline code name (its target, ``~`` and
leading dots dropped) when the target is one identifier, else plain text; the cross-reference roles
``:doc:`` and ``:ref:`` are links. An unknown directive keeps its body as prose and drops its
arguments and options. Literal blocks (``::``) and ``code``/``code-block`` directives are code
blocks; admonitions (``note``, ``warning``...) are prose. Include directives and raw input are off.
"""

from __future__ import annotations

import re

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.languages import en as english

from minirag_core.extraction.markdown import Block, slug

PAGE_EXTENSIONS = (".rst", ".rest")
#: href prefix of a ``:ref:`` link (a label, resolved by the page that defines it)
REF_PREFIX = "ref:"
_ROLE = re.compile(r":([A-Za-z][\w.+-]*(?::[\w.+-]+)?):`")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w.+-]*(?::[\w.+-]+)*)::", re.M)
_EXPLICIT = re.compile(r"^\s*\.\.\s+\S")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
_IDENTIFIER = re.compile(r"^[\w.:/()-]+$")
_LINK_ROLES = {"doc", "ref", "any"}
_SETTINGS = {"report_level": 5, "halt_level": 5, "doctitle_xform": False, "sectsubtitle_xform": False,
             "file_insertion_enabled": False, "raw_enabled": False, "syntax_highlight": "none",
             "warning_stream": False, "input_encoding": "unicode"}


class _AnyOptions(dict):
    """An option spec that accepts every option (as unparsed text)."""

    def __missing__(self, key: str):
        return directives.unchanged


class _GenericDirective(Directive):
    """A directive docutils does not know: its body is read as reST, arguments and options dropped."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        box = nodes.container()
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


def _generic_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """An unknown interpreted-text role: a link (cross-references), a code name or plain text."""
    titled = _TITLED.match(text)
    title, target = (titled.group(1), titled.group(2)) if titled else ("", text)
    target = target.strip()
    role = name.lower().rsplit(":", 1)[-1]
    if role in _LINK_ROLES:
        href = f"{REF_PREFIX}{target}" if role != "doc" else target
        return [nodes.reference(rawtext, title or target.lstrip("~/"), refuri=href)], []
    name_text = target.lstrip("~!").lstrip(".")
    if not title and _IDENTIFIER.match(name_text):
        return [nodes.literal(rawtext, name_text)], []
    return [nodes.Text(title or name_text)], []


def _register_unknown(text: str) -> None:
    """Give every role and directive the page uses that docutils does not know a generic reader."""
    for name in set(_ROLE.findall(text)):
        if not _known(name.lower(), roles._roles, roles._role_registry, english.roles):
            roles.register_local_role(name, _generic_role)
    for name in set(_DIRECTIVE.findall(text)):
        if not _known(name.lower(), directives._directives, directives._directive_registry, english.directives):
            directives.register_directive(name, _GenericDirective)


def _known(name: str, local: dict, registry: dict, aliases: dict) -> bool:
    return name in local or name in registry or aliases.get(name, name) in registry


def _inline(node: nodes.Node) -> tuple[str, list[tuple[int, int]], list[tuple[int, int, str]]]:
    """Plain text of a text element, with its code spans and links as offsets."""
    parts: list[str] = []
    codes: list[tuple[int, int]] = []
    links: list[tuple[int, int, str]] = []

    def walk(n: nodes.Node) -> None:
        size = sum(map(len, parts))
        if isinstance(n, nodes.Text):
            parts.append(str(n).replace("\n", " "))
        elif isinstance(n, (nodes.target, nodes.footnote_reference, nodes.citation_reference)):
            return
        elif isinstance(n, nodes.literal):
            parts.append(n.astext())
            codes.append((size, size + len(parts[-1])))
        else:
            for child in n.children:
                walk(child)
            if isinstance(n, nodes.reference) and n.get("refuri"):
                links.append((size, sum(map(len, parts)), str(n["refuri"])))

    walk(node)
    return "".join(parts), codes, links


def _start_line(lines: list[str], line: int | None, floor: int, heading: bool) -> int:
    """The 0-based first source line of a block docutils places at 1-based ``line`` (the last line
    of a paragraph, the underline of a title), with a title's overline and the explicit markup
    just above the block (a ``.. _label:`` or the directive line of a code block)."""
    if not line:
        return floor
    start = min(line - 1, len(lines) - 1)
    if heading:
        start = max(start - 1, 0)
        if start and _ADORNMENT.match(lines[start - 1]):
            start -= 1
    else:
        while start > floor and lines[start - 1].strip() and not _ADORNMENT.match(lines[start - 1]):
            start -= 1
    probe = start
    while probe > floor and (not lines[probe - 1].strip() or lines[probe - 1].lstrip().startswith(":")):
        probe -= 1
    while probe > floor and _EXPLICIT.match(lines[probe - 1]):
        start = probe - 1
        probe = start
        while probe > floor and not lines[probe - 1].strip():
            probe -= 1
    return max(start, floor)


def blocks(text: str) -> list[Block]:
    """The page's blocks in order (see :class:`~minirag_core.extraction.markdown.Block`)."""
    _register_unknown(text)
    tree = publish_doctree(text, settings_overrides=_SETTINGS)
    lines = text.splitlines()
    out: list[Block] = []

    def add(block: Block, line: int | None, heading: bool = False) -> None:
        floor = out[-1].line + 1 if out else 0
        block.line = min(_start_line(lines, line, floor, heading), max(len(lines) - 1, 0))
        if out and block.line < out[-1].line:
            block.line = out[-1].line
        out.append(block)

    def walk(node: nodes.Node, depth: int) -> None:
        for child in node.children:
            if isinstance(child, nodes.section):
                title = next((c for c in child.children if isinstance(c, nodes.title)), None)
                if title is not None:
                    plain, codes, links = _inline(title)
                    add(Block("heading", plain.strip(), 0, level=depth + 1, anchor=_anchor(child, plain),
                              codes=codes, links=links), title.line or child.line, heading=True)
                walk(child, depth + 1)
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                classes = [c for c in child.get("classes", []) if c != "code"]
                add(Block("code", child.astext(), 0, lang=(classes[0] if classes else "").lower()), child.line)
            elif isinstance(child, (nodes.paragraph, nodes.line, nodes.rubric, nodes.term)):
                plain, codes, links = _inline(child)
                if plain.strip():
                    add(Block("text", plain, 0, codes=codes, links=links), child.line)
            elif isinstance(child, (nodes.comment, nodes.substitution_definition, nodes.target,
                                    nodes.system_message, nodes.field_list, nodes.raw, nodes.title)):
                continue
            elif isinstance(child, nodes.Element):
                walk(child, depth)

    walk(tree, 0)
    return out


def _anchor(section: nodes.section, title: str) -> str:
    """A section's anchor: its explicit label when it has one, else its title as a slug."""
    ids = [str(i) for i in section.get("ids", [])]
    names = [str(n) for n in section.get("names", [])]
    labels = [n for n in names if slug(n) != slug(title)]
    return labels[0] if labels else (ids[0] if ids else slug(title))


def labels(text: str) -> list[str]:
    """The ``.. _label:`` names a page defines (what ``:ref:`` links point to)."""
    return [n.strip("`").strip() for n in re.findall(r"^\s*\.\.\s+_([^:`][^:]*|`[^`]+`):\s*$", text, re.M)]


def referenced_labels(text: str) -> list[str]:
    """The labels ``:ref:`label``` and ``:ref:`title <label>``` roles in ``text`` point to (lower case)."""
    found = re.findall(r":(?:[\w.+-]+:)?ref:`(?:[^`<]*<([^`>]+)>|([^`]+))`", text)
    return list(dict.fromkeys((a or b).strip().lower() for a, b in found))


__all__ = ["PAGE_EXTENSIONS", "REF_PREFIX", "blocks", "labels", "referenced_labels"]
