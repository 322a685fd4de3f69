"""Text of Office documents (Word, Excel, PowerPoint) from their own files, on the stdlib.

A .docx, .xlsx or .pptx file is a zip of XML parts (Office Open XML, ECMA-376); the text
is in known elements of known parts, so ``zipfile`` and ``xml.etree`` read it in one
download and no conversion. docs/decisions/0009-office-documents-as-text.md says why this
route rather than Graph's ``?format=pdf`` conversion and a PDF reader.

The archive is untrusted: parts are read with a bound on their decompressed size, and
``ElementTree`` is given no DTD (a part with one is refused, so no entity expansion).
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Callable

MAX_PART_BYTES = 64 * 1024 * 1024
"""The most one XML part may decompress to; past it the document is refused (a zip bomb)."""

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"

KINDS = {"docx": "word", "docm": "word", "xlsx": "excel", "xlsm": "excel", "pptx": "powerpoint",
         "pptm": "powerpoint"}
MIME_KINDS = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "word",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "excel",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "powerpoint",
}
LEGACY = {"doc", "xls", "ppt", "rtf", "odt", "ods", "odp"}


class OfficeError(Exception):
    """The file is not a readable Office document."""


def office_kind(mime: str | None, name: str) -> str | None:
    """``word``, ``excel``, ``powerpoint`` or None, from the MIME type or the extension."""
    kind = MIME_KINDS.get((mime or "").split(";")[0].strip().lower())
    if kind:
        return kind
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return KINDS.get(extension)


def is_legacy_office(name: str) -> bool:
    return ("." in name) and name.rsplit(".", 1)[-1].lower() in LEGACY


def text_of(data: bytes, kind: str) -> str:
    """The text of an Office document; OfficeError when it cannot be read."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise OfficeError("the file is not an Office Open XML document (not a zip)") from None
    with archive:
        readers: dict[str, Callable[[zipfile.ZipFile], str]] = {
            "word": _word, "excel": _excel, "powerpoint": _powerpoint}
        try:
            return readers[kind](archive).strip("\n")
        except KeyError as exc:
            raise OfficeError(f"the document has no part {exc}") from None
        except (zipfile.BadZipFile, ValueError, EOFError) as exc:
            raise OfficeError(f"the document is damaged ({exc})") from None


def _xml(archive: zipfile.ZipFile, name: str) -> object:
    import xml.etree.ElementTree as ET

    info = archive.getinfo(name)
    if info.file_size > MAX_PART_BYTES:
        raise OfficeError(f"the part {name} would unpack to {info.file_size} bytes")
    with archive.open(info) as handle:
        data = handle.read(MAX_PART_BYTES + 1)
    if len(data) > MAX_PART_BYTES:
        raise OfficeError(f"the part {name} unpacks to more than {MAX_PART_BYTES} bytes")
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
        raise OfficeError(f"the part {name} declares a DTD, which Office documents never need")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise OfficeError(f"the part {name} is not well-formed XML ({exc})") from None


def _paragraphs(root: object, para: str, run_text: str, tab: str | None = None,
                brk: str | None = None) -> list[str]:
    lines: list[str] = []
    for p in root.iter(para):  # type: ignore[attr-defined]
        parts: list[str] = []
        for node in p.iter():
            if node.tag == run_text and node.text:
                parts.append(node.text)
            elif tab is not None and node.tag == tab:
                parts.append("\t")
            elif brk is not None and node.tag == brk:
                parts.append("\n")
        lines.append("".join(parts))
    return lines


def _word(archive: zipfile.ZipFile) -> str:
    root = _xml(archive, "word/document.xml")
    return "\n".join(_paragraphs(root, W + "p", W + "t", W + "tab", W + "br"))


def _powerpoint(archive: zipfile.ZipFile) -> str:
    slides = sorted((n for n in archive.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)),
                    key=lambda n: int(re.findall(r"\d+", n)[-1]))
    out: list[str] = []
    for number, name in enumerate(slides, 1):
        lines = [line for line in _paragraphs(_xml(archive, name), A + "p", A + "t", None,
                                              A + "br") if line.strip()]
        out.append(f"--- slide {number} ---")
        out.extend(lines)
    return "\n".join(out)


def _excel(archive: zipfile.ZipFile) -> str:
    shared: list[str] = []
    if "xl/sharedStrings.xml" in archive.namelist():
        for item in _xml(archive, "xl/sharedStrings.xml").iter(S + "si"):  # type: ignore[attr-defined]
            shared.append("".join(t.text or "" for t in item.iter(S + "t")))
    workbook = _xml(archive, "xl/workbook.xml")
    rels = _xml(archive, "xl/_rels/workbook.xml.rels")
    targets = {rel.get("Id"): rel.get("Target", "")
               for rel in rels.iter()  # type: ignore[attr-defined]
               if rel.tag.endswith("Relationship")}
    out: list[str] = []
    for sheet in workbook.iter(S + "sheet"):  # type: ignore[attr-defined]
        target = targets.get(sheet.get(R + "id"), "")
        path = target.lstrip("/") if target.startswith("/") else "xl/" + target
        if path not in archive.namelist():
            continue
        out.append(f"--- sheet {sheet.get('name', '?')} ---")
        for row in _xml(archive, path).iter(S + "row"):  # type: ignore[attr-defined]
            cells: list[str] = []
            for cell in row.iter(S + "c"):
                kind = cell.get("t")
                value = cell.find(S + "v")
                if kind == "s" and value is not None and value.text is not None:
                    index = int(value.text)
                    cells.append(shared[index] if 0 <= index < len(shared) else "")
                elif kind == "inlineStr":
                    cells.append("".join(t.text or "" for t in cell.iter(S + "t")))
                else:
                    cells.append(value.text or "" if value is not None else "")
            out.append("\t".join(cells).rstrip("\t"))
    return "\n".join(out)
