"""DownloadOneDriveFile: save a OneDrive file into the workspace."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Any, Literal

from janito_core import BaseTool, Failure, WorkspaceError, tool
from janito_core.results import counted

from ._common import gate, guarded, invalid
from ._items import DriveItem, TypedDict

BLOCK = 256 * 1024


class Downloaded(TypedDict):
    """What DownloadOneDriveFile answers.

    Attributes:
        path: The file, from the drive's root.
        output_path: Where it was asked to go, as given.
        local_path: Where it was saved in the workspace.
        size: Bytes written.
        file: The file on OneDrive.
    """

    success: Literal[True]
    path: str
    output_path: str | None
    local_path: str
    size: int
    file: DriveItem


@tool(permissions="w")
class DownloadOneDriveFile(BaseTool):
    """Download a OneDrive file and save it in the workspace."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, output_path: str | None = None,
            overwrite: bool = False, drive_id: str | None = None) -> Downloaded | Failure:
        """Download a file from OneDrive into the workspace (never outside it).

        Args:
            path: The file, relative to the OneDrive root, such as "Documents/report.pdf".
            output_path: Where to save it in the workspace; a folder keeps the file's name.
                Defaults to the file's name in the workspace root.
            overwrite: Replace a file that already exists at output_path.
            drive_id: Download from another drive, such as a SharePoint document library (its
                id); omitted: your OneDrive.
        """
        echo = {"path": path, "output_path": output_path}
        return guarded(self, lambda: self._download(path, output_path, overwrite, drive_id),
                       **echo)

    def _download(self, path: str, output_path: str | None, overwrite: bool,
                  drive_id: str | None = None) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import check_drive_id, clean_path, format_item, is_folder

        echo = {"path": path, "output_path": output_path}
        try:
            where = clean_path(path, allow_root=False)
            drive = check_drive_id(drive_id)
        except ValueError as exc:
            return invalid(str(exc), **echo)

        def item_target(p: str) -> str:
            from ._graph import item_target as target

            return target(p, drive)

        def item_action(p: str, action: str) -> str:
            from ._graph import item_action as target

            return target(p, action, drive)

        name = where.rsplit("/", 1)[-1]
        try:
            target, found, shown = self._target(output_path, name)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": exc.error_type, **echo}
        except OSError as exc:
            return _local_failure(exc, output_path or name, echo)
        if found is not None and stat.S_ISDIR(found.st_mode):
            return {"success": False, "error_type": "is_directory",
                    "error": f"{shown} is a folder", **echo}
        if found is not None and not overwrite:
            return {"success": False, "error_type": "file_exists",
                    "error": f"{shown} already exists; pass overwrite=true to replace it",
                    **echo}
        self.report_start(f"Downloading OneDrive /{where} to {shown}")
        graph = _common.client()
        try:
            item = graph.get_json(item_target(where), f"reading '/{where}'")
        except GraphError as exc:
            if exc.status == 404:
                raise GraphError(_common.not_found("file", where), "not_found", status=404) from None
            raise
        if is_folder(item):
            return {"success": False, "error_type": "is_directory",
                    "error": f"'/{where}' is a folder; only files can be downloaded", **echo}
        expected = item.get("size") if isinstance(item.get("size"), int) else None
        response = graph.download(item_action(where, "content"), f"downloading '/{where}'")
        written = 0

        def blocks() -> Iterator[bytes]:
            # Raising here leaves the target as it was: the workspace writes a hidden
            # temporary file and renames it into place only once every block is in.
            nonlocal written
            while True:
                try:
                    block = response.raw.read(BLOCK) if response.raw is not None else b""
                except Exception as exc:
                    raise GraphError(
                        f"the download of '/{where}' broke off after {counted(written, 'byte')} "
                        f"({type(exc).__name__})", "connection_failed") from None
                if not block:
                    break
                written += len(block)
                yield block
            if expected is not None and written != expected:
                raise GraphError(f"the download of '/{where}' stopped at {written} of {expected} "
                                 "bytes", "connection_failed")

        try:
            with self.workspace.locate(target, make_parents=True) as place:
                shown = place.shown
                place.write(blocks(), overwrite=overwrite)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": exc.error_type, **echo}
        except FileExistsError:
            return {"success": False, "error_type": "file_exists",
                    "error": f"{shown} already exists; pass overwrite=true to replace it",
                    **echo}
        except IsADirectoryError:
            return {"success": False, "error_type": "is_directory",
                    "error": f"{shown} is a folder", **echo}
        except OSError as exc:
            return _local_failure(exc, shown, echo)
        finally:
            response.close()
        self.report_result(f"Saved {counted(written, 'byte')} to {shown}")
        return {"success": True, "path": where, "output_path": output_path, "local_path": shown,
                "size": written, "file": format_item(item)}

    def _target(self, output_path: str | None, name: str
                ) -> tuple[str, os.stat_result | None, str]:
        """(workspace path to write, what is there now or None, that path as shown).

        ``output_path`` naming a folder (existing, or ending in "/") means the file's own
        name in that folder.
        """
        target = output_path or name
        if not target.endswith("/"):
            found, shown = self._look(target)
            if found is None or not stat.S_ISDIR(found.st_mode):
                return target, found, shown
        target = f"{target.rstrip('/')}/{name}"
        found, shown = self._look(target)
        return target, found, shown

    def _look(self, target: str) -> tuple[os.stat_result | None, str]:
        try:
            with self.workspace.locate(target) as place:
                return place.lookup(), place.shown
        except (FileNotFoundError, NotADirectoryError):
            return None, target  # folders on the way are made, or refused, when it is written


def _local_failure(exc: OSError, shown: str, echo: dict[str, Any]) -> dict[str, Any]:
    """The result for a workspace file that could not be reached or written."""
    kind = "not_a_directory" if isinstance(exc, NotADirectoryError) else "write_failed"
    return {"success": False, "error_type": kind,
            "error": f"cannot write {shown}: {exc.strerror or exc}", **echo}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(DownloadOneDriveFile, argv)


if __name__ == "__main__":
    main()
