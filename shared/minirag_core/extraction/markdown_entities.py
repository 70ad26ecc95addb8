"""A Markdown or reST chunk's structure as entities and relations (the prose goes through the usual
sentence reader): its heading path as subjects, code identifiers (inline spans and what
fenced code defines, imports or calls) as CODE/ERROR entities linked to their section, and
links to other pages as relations to the target page's entity, whose description is the link
text and its sentence. Every chunk of a page is about that page's entity, so a link from page A
is a bridge to page B, as a mentioned subject is."""

from __future__ import annotations

from dataclasses import dataclass, field

from minirag_core.extraction import markdown, page_structure
from minirag_core.extraction.chunk_reader import LINK_WEIGHT, MAX_SENTENCE, ChunkEntities, Sentence, trim
from minirag_core.extraction.code_names import block_names, code_kind, is_code_shaped, line_of

DOCUMENT = "DOCUMENT"
SECTION = "CONCEPT"  # a heading names the topic of its section
LINK_KEYWORD = "links to"


@dataclass
class Unit:
    """A prose block of the chunk and the section (heading) it sits under."""

    text: str
    section: str
    codes: list[tuple[int, int]]
    links: list[tuple[int, int, str]]


@dataclass
class MarkdownChunk:
    page: str                      # the page's key (its path without extension)
    path: list[str]                # heading path at the chunk's start, page title first
    headings: list[str]            # headings inside the chunk
    prose: list[Unit] = field(default_factory=list)
    code: list[tuple[str, str, str]] = field(default_factory=list)  # (lang, source, section)
    refs: dict[str, str] = field(default_factory=dict)  # reST label -> the page (key) defining it


def is_markdown_chunk(metadata: dict) -> bool:
    return markdown.HEADING_PATH_KEY in (metadata or {})


def read_chunk(text: str, doc_id: str, metadata: dict) -> MarkdownChunk:
    """The chunk's blocks under their sections (headings are subjects, not prose)."""
    path = [str(p) for p in metadata.get(markdown.HEADING_PATH_KEY) or []]
    out = MarkdownChunk(page_structure.page_key(doc_id), path, [],
                        refs=dict((metadata or {}).get(page_structure.REF_TARGETS_KEY) or {}))
    section = path[-1] if path else ""
    name = str((metadata or {}).get("source") or (metadata or {}).get("file_path") or doc_id)
    for block in page_structure.blocks(text, name):
        if block.kind == "heading":
            if block.text:
                out.headings.append(block.text)
                section = block.text
        elif block.kind == "code":
            out.code.append((block.lang, block.text, section))
        else:
            out.prose.append(Unit(block.text, section, block.codes, block.links))
    return out


def sentence_parts(unit: Unit, start: int, end: int) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """The unit's code spans and links inside one sentence (``start``..``end``), sentence offsets."""
    codes = [(a - start, b - start) for a, b in unit.codes if start <= a and b <= end]
    links = [(a - start, b - start, h) for a, b, h in unit.links if start <= a and b <= end]
    return codes, links


def _entity(ce: ChunkEntities, name: str, kind: str, sentence: str | None) -> str | None:
    key = ce.add(name, kind, sentence, None)
    if key:
        ce.structural_types.setdefault(key, kind_type(kind, name))
    return key


def kind_type(kind: str, name: str) -> str:
    """DOCUMENT for a page, CONCEPT for a heading (CODE/ERROR for one that names an identifier),
    CODE/ERROR for a code name."""
    if kind == "page":
        return DOCUMENT
    return SECTION if kind == "heading" and not is_code_shaped(name) else code_kind(name)


def add_markdown(ce: ChunkEntities, doc_id: str, page: MarkdownChunk,
                 sentences: list[tuple[Sentence, Unit]]) -> None:
    """Subjects, code entities and link relations of one Markdown chunk (see the module doc)."""
    page_entity = _entity(ce, page.page, "page", None)
    sections: dict[str, str] = {}
    for title in [*page.path, *page.headings]:
        key = _entity(ce, title, "heading", None)
        if key:
            sections[title] = key
            ce.sentences.setdefault(key, [])
    ce.subjects = list(dict.fromkeys(k for k in [page_entity, *sections.values()] if k))
    ce.subject = ce.subjects[1] if len(ce.subjects) > 1 else (ce.subjects[0] if ce.subjects else None)
    if page_entity and page.path:
        title = sections.get(page.path[0])
        if title and title != page_entity:
            ce.relate(title, page_entity, LINK_WEIGHT, f"{page.path[0]} is the title of page {page.page}", "title of",
                      link=True)
    for sent, unit in sentences:
        here = sections.get(unit.section) or page_entity
        desc = trim(sent.text, MAX_SENTENCE)
        for sp in sent.spans:
            if sp.kind == "code" and here and ce.names.get(here):
                key = ce.add(sp.name, "code", None, None)
                if key and key != here:
                    ce.relate(here, key, 1.0, desc, "mentions", link=True)
        for a, b, href in sent.links:
            target = page_structure.link_target(doc_id, href, page.refs)
            if target is None or not here or target[0] == page.page:
                continue
            target_key = _entity(ce, target[0], "page", None)
            if target_key and target_key != here:
                label = sent.text[a:b].strip()
                anchor = f" (section #{target[1]})" if target[1] else ""
                ce.relate(here, target_key, LINK_WEIGHT, trim(f"link \"{label}\"{anchor}: {sent.text}", MAX_SENTENCE),
                          LINK_KEYWORD, link=True)
    for lang, source, section in page.code:
        here = sections.get(section) or page_entity
        for name, role in block_names(source, lang):
            line = trim(line_of(source, name), MAX_SENTENCE)
            key = _entity(ce, name, "code", line or None)
            if key and here and key != here:
                ce.relate(here, key, 1.0, trim(f"{name} is {role} in a code example: {line}", MAX_SENTENCE),
                          f"code {role}", link=True)


__all__ = ["DOCUMENT", "LINK_KEYWORD", "MarkdownChunk", "Unit", "add_markdown", "is_markdown_chunk", "read_chunk",
           "sentence_parts"]
