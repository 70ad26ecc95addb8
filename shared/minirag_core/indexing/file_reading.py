"""Which files of a folder become documents, how they are read, and why others are skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Sequence

#: read as UTF-8 text
TEXT_SUFFIXES = {".txt", ".text", ".md", ".markdown", ".rst", ".org", ".adoc", ".tex", ".log", ".csv", ".tsv",
                 ".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".xml", ".eml", ".srt", ".vtt"}
#: read as HTML: the visible text, without scripts and styles
HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
#: formats that need a converter this package does not bundle
CONVERT_FIRST = {".pdf": "PDF", ".docx": "Word", ".doc": "Word", ".odt": "OpenDocument", ".rtf": "RTF",
                 ".pptx": "PowerPoint", ".xlsx": "Excel", ".epub": "EPUB"}
_BINARY_PROBE = 8192


@dataclass
class FoundFiles:
    readable: list[Path] = field(default_factory=list)
    skipped: dict[Path, str] = field(default_factory=dict)  # path -> reason


def _classify(path: Path, found: FoundFiles) -> None:
    suffix = path.suffix.lower()
    if suffix in CONVERT_FIRST:
        found.skipped[path] = (f"{CONVERT_FIRST[suffix]} files are not read; convert to text first "
                               f"(e.g. pdftotext or pandoc) and index the .txt")
    elif suffix in TEXT_SUFFIXES or suffix in HTML_SUFFIXES:
        found.readable.append(path)
    elif suffix == "":
        found.skipped[path] = ("no file extension, so not known to be a text document (build files, licences); "
                               "name the file itself to index it")
    else:
        found.skipped[path] = f"file type {suffix} is not read (text, Markdown and HTML are)"


def collect_files(paths: Sequence[str | Path]) -> FoundFiles:
    """Files named directly are always tried; folders are walked (hidden entries left out)."""
    found = FoundFiles()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.readable.append(path) if path.suffix.lower() not in CONVERT_FIRST else _classify(path, found)
        elif path.is_dir():
            for child in sorted(path.rglob("*")):
                relative = child.relative_to(path).parts
                if child.is_file() and not any(part.startswith(".") for part in relative):
                    _classify(child, found)
        else:
            raise FileNotFoundError(f"{raw}: no such file or folder")
    return found


class _VisibleText(HTMLParser):
    _HIDDEN = {"script", "style", "head", "noscript", "template"}
    _BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self._HIDDEN:
            self._hidden += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN and self._hidden:
            self._hidden -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def decode_text(data: bytes) -> tuple[str | None, str]:
    """(text, "") for UTF-8; (text, encoding) for another charset that ``charset-normalizer``
    detects, cp1252 among equally likely ones (the usual non-UTF-8 text); (None, "") if none fits."""
    try:
        return data.decode("utf-8-sig"), ""
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None, ""
    least = min(m.chaos for m in matches)
    likely = [m for m in matches if m.chaos == least]
    if any("cp1252" in m.could_be_from_charset for m in likely):
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:  # a byte cp1252 leaves undefined
            pass
    return str(likely[0]), likely[0].encoding


def read_document(path: Path) -> tuple[str | None, str]:
    """(text, note) or (None, reason the file is skipped); the note names the charset of a file
    that was not UTF-8 (empty for UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    if b"\x00" in data[:_BINARY_PROBE]:
        return None, "binary file (not text)"
    text, encoding = decode_text(data)
    if text is None:
        return None, ("not text in any known charset; re-encode it as UTF-8, e.g. "
                      f"`iconv -f SOURCE-CHARSET -t utf-8 {path.name} > {path.stem}.utf8{path.suffix}`")
    if path.suffix.lower() in HTML_SUFFIXES:
        text = html_to_text(text)
    if not text.strip():
        return None, "empty (no text)"
    return text, f"read as {encoding} (not UTF-8)" if encoding else ""
