"""ReadOneDriveFile: a OneDrive file's details and, for text, its content up to a cap."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Interval
from janito_core.results import counted

from ._common import gate, guarded, invalid
from ._items import DriveItem, NotRequired, TypedDict

DEFAULT_MAX = 10_000
HARD_MAX = 1_000_000
OFFICE_MAX_BYTES = 25 * 1024 * 1024
"""The largest Word, Excel or PowerPoint file read as text (it is read whole)."""

TEXT_TYPES = {
    "application/json", "application/xml", "application/javascript", "application/x-yaml",
    "application/yaml", "application/x-sh", "application/x-python", "application/sql",
    "application/toml", "application/x-ndjson", "application/ld+json",
}
TEXT_EXTENSIONS = {
    "txt", "md", "markdown", "csv", "tsv", "json", "xml", "yaml", "yml", "toml", "ini", "cfg",
    "conf", "log", "py", "js", "ts", "html", "htm", "css", "sh", "sql", "rst", "tex", "svg",
    "java", "c", "h", "cpp", "go", "rs", "rb", "php", "ps1", "bat", "srt", "vtt",
}


def looks_textual(mime: str | None, name: str) -> bool | None:
    """True for a text type, False for a known binary one, None when only the bytes can tell."""
    mime = (mime or "").split(";")[0].strip().lower()
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return True
    if extension in TEXT_EXTENSIONS:
        return True
    if mime and mime != "application/octet-stream":
        return False
    return None


def decode_prefix(data: bytes, complete: bool) -> str | None:
    """UTF-8 text of ``data``, tolerating a character cut at the end; None for binary bytes."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not complete and exc.start >= len(data) - 3:
            try:
                return data[: exc.start].decode("utf-8")
            except UnicodeDecodeError:
                return None
        return None


class FileRead(TypedDict):
    """What ReadOneDriveFile answers: the details, and the text when it was read.

    Attributes:
        path: The file, from the drive's root.
        file: Its details.
        content: Its text (an Office document's text as plain text), up to
            max_content_length.
        truncated: Whether the file holds more than content.
        bytes_read: Bytes downloaded.
        content_format: How an Office document's text was made.
        content_skipped: Why the text was not read (binary, too large, not UTF-8).
    """

    success: Literal[True]
    path: str
    file: DriveItem
    content: NotRequired[str]
    truncated: NotRequired[bool]
    bytes_read: NotRequired[int]
    content_format: NotRequired[str]
    content_skipped: NotRequired[str]


@tool(permissions="r")
class ReadOneDriveFile(BaseTool):
    """Read a OneDrive file: its details and, for a text file, its content up to a size cap."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, include_content: bool = True,
            max_content_length: Annotated[int, Interval(ge=1, le=HARD_MAX)] = DEFAULT_MAX,
            drive_id: str | None = None) -> FileRead | Failure:
        """Read a file's metadata and its text; Word, Excel and PowerPoint files are read as text.

        Args:
            path: The file, relative to the OneDrive root, such as "Documents/notes.txt".
            include_content: Also read the text content (only the metadata when false).
            max_content_length: Most bytes of content to read (characters of an Office
                document's text); `truncated` tells whether there is more.
            drive_id: Read from another drive, such as a SharePoint document library (its id);
                omitted: your OneDrive.
        """
        echo: dict[str, Any] = {"path": path}
        if drive_id:
            echo["drive_id"] = drive_id
        return guarded(self, lambda: self._read(path, include_content, max_content_length,
                                                drive_id), **echo)

    def _read(self, path: str, include_content: bool, cap: int,
              drive_id: str | None = None) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import check_drive_id, clean_path, format_item, is_folder

        try:
            where = clean_path(path, allow_root=False)
            drive = check_drive_id(drive_id)
        except ValueError as exc:
            return invalid(str(exc), path=path)

        def item_target(p: str) -> str:
            from ._graph import item_target as target

            return target(p, drive)

        def item_action(p: str, action: str) -> str:
            from ._graph import item_action as target

            return target(p, action, drive)

        self.report_start(f"Reading OneDrive file /{where}")
        graph = _common.client()
        try:
            item = graph.get_json(item_target(where), f"reading '/{where}'")
        except GraphError as exc:
            if exc.status == 404:
                raise GraphError(_common.not_found("file", where), "not_found", status=404) from None
            raise
        info = format_item(item)
        if is_folder(item):
            return {"success": False, "path": where, "error_type": "is_directory",
                    "error": f"'/{where}' is a folder; list it with ListOneDriveFiles",
                    "file": info}
        result: dict[str, Any] = {"success": True, "path": where, "file": info}
        if not include_content:
            self.report_result(f"Read the details of /{where}")
            return result
        from ._office import is_legacy_office, office_kind

        office = office_kind(info.get("mime_type"), info["name"])
        if office is not None:
            return self._office(graph, item_action(where, "content"), where, item, office, cap,
                                result)
        if is_legacy_office(info["name"]):
            result["content_skipped"] = (
                "an older Office format (.doc, .xls, .ppt) or OpenDocument file, which is not read "
                "as text; save it with DownloadOneDriveFile")
            self.report_result(f"/{where} is an older Office format; content not read")
            return result
        kind = looks_textual(info.get("mime_type"), info["name"])
        if kind is False:
            result["content_skipped"] = (
                f"binary file ({info.get('mime_type')}); save it with DownloadOneDriveFile")
            self.report_result(f"/{where} is binary; content not read")
            return result
        size = item.get("size") if isinstance(item.get("size"), int) else None
        if size == 0:
            data = b""
        else:
            # Ask only for what is returned; a server that ignores Range sends it all, and
            # only cap + 1 bytes of that are read.
            ranged = {"Range": f"bytes=0-{cap - 1}"} if size is None or size > cap else None
            response = graph.download(item_action(where, "content"), f"downloading '/{where}'",
                                      headers=ranged)
            try:
                data = response.raw.read(cap + 1) if response.raw is not None else response.body
            finally:
                response.close()
        truncated = len(data) > cap or (size is not None and size > cap)
        data = data[:cap]
        text = decode_prefix(data, complete=not truncated)
        if text is None:
            result["content_skipped"] = "the file is not UTF-8 text; save it with DownloadOneDriveFile"
            self.report_result(f"/{where} is not text; content not read")
            return result
        result.update(content=text, truncated=truncated, bytes_read=len(data))
        self.report_result(f"Read {counted(len(data), 'byte')} of /{where}" + (" (truncated)" if truncated else ""))
        return result


    def _office(self, graph: Any, content: str, where: str, item: dict[str, Any], kind: str,
                cap: int, result: dict[str, Any]) -> dict[str, Any]:
        """The text of a Word, Excel or PowerPoint file, read whole (it is a zip)."""
        from ._errors import GraphError
        from ._office import OfficeError, text_of

        size = item.get("size") if isinstance(item.get("size"), int) else None
        if size is not None and size > OFFICE_MAX_BYTES:
            result["content_skipped"] = (f"the {kind} document is {size} bytes, more than the "
                                         f"{OFFICE_MAX_BYTES} read as text; save it with "
                                         "DownloadOneDriveFile")
            return result
        self.report_progress(f"Reading the text of a {kind} document")
        response = graph.download(content, f"downloading '/{where}'")
        try:
            data = response.raw.read(OFFICE_MAX_BYTES + 1) if response.raw is not None \
                else response.body
        except Exception as exc:
            raise GraphError(f"the download of '/{where}' broke off ({type(exc).__name__})",
                             "connection_failed") from None
        finally:
            response.close()
        if len(data) > OFFICE_MAX_BYTES:
            result["content_skipped"] = (f"the {kind} document is larger than {OFFICE_MAX_BYTES} "
                                         "bytes; save it with DownloadOneDriveFile")
            return result
        try:
            text = text_of(data, kind)
        except OfficeError as exc:
            result["content_skipped"] = f"the {kind} document cannot be read as text: {exc}"
            self.report_result(f"/{where}: {exc}")
            return result
        truncated = len(text) > cap
        result.update(content=text[:cap], truncated=truncated, bytes_read=len(data),
                      content_format=f"text of a {kind} document")
        self.report_result(f"Read {counted(min(len(text), cap), 'character')} of text from /{where}"
                           + (" (truncated)" if truncated else ""))
        return result


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(ReadOneDriveFile, argv)


if __name__ == "__main__":
    main()
