"""DownloadOneDriveFile: save a OneDrive file into the workspace."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, WorkspaceError, tool

from ._common import gate, guarded, invalid

BLOCK = 256 * 1024


@tool(permissions="w")
class DownloadOneDriveFile(BaseTool):
    """Download a OneDrive file and save it in the workspace."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, output_path: str | None = None,
            overwrite: bool = False) -> dict[str, Any]:
        """Download a file from OneDrive into the workspace (never outside it).

        Args:
            path: The file, relative to the OneDrive root, such as "Documents/report.pdf".
            output_path: Where to save it in the workspace; a folder keeps the file's name.
                Defaults to the file's name in the workspace root.
            overwrite: Replace a file that already exists at output_path.
        """
        echo = {"path": path, "output_path": output_path}
        return guarded(self, lambda: self._download(path, output_path, overwrite), **echo)

    def _download(self, path: str, output_path: str | None, overwrite: bool) -> dict[str, Any]:
        import os
        import tempfile

        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, format_item, is_folder, item_action, item_target

        echo = {"path": path, "output_path": output_path}
        try:
            where = clean_path(path, allow_root=False)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        name = where.rsplit("/", 1)[-1]
        try:
            target = self.resolve_path(output_path or name)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": "outside_workspace",
                    **echo}
        if os.path.isdir(target):
            target = self.resolve_path(os.path.join(target, name))
        if os.path.exists(target) and not overwrite:
            return {"success": False, "error_type": "file_exists",
                    "error": f"{self.display_path(target)} already exists; pass overwrite=true "
                             "to replace it", **echo}
        if os.path.isdir(target):
            return {"success": False, "error_type": "is_directory",
                    "error": f"{self.display_path(target)} is a folder", **echo}
        self.report_start(f"Downloading OneDrive /{where} to {self.display_path(target)}")
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
        folder = os.path.dirname(target)
        os.makedirs(folder, exist_ok=True)
        response = graph.download(item_action(where, "content"), f"downloading '/{where}'")
        fd, partial = tempfile.mkstemp(dir=folder, prefix=".onedrive-", suffix=".part")
        written = 0
        try:
            with os.fdopen(fd, "wb") as handle:
                while True:
                    try:
                        block = response.raw.read(BLOCK) if response.raw is not None else b""
                    except Exception as exc:
                        raise GraphError(
                            f"the download of '/{where}' broke off after {written} bytes "
                            f"({type(exc).__name__})", "connection_failed") from None
                    if not block:
                        break
                    handle.write(block)
                    written += len(block)
            if expected is not None and written != expected:
                raise GraphError(f"the download of '/{where}' stopped at {written} of {expected} "
                                 "bytes", "connection_failed")
            os.replace(partial, target)
        finally:
            response.close()
            if os.path.exists(partial):
                os.unlink(partial)
        shown = self.display_path(target)
        self.report_result(f"Saved {written} bytes to {shown}")
        return {"success": True, "path": where, "output_path": output_path, "local_path": shown,
                "size": written, "file": format_item(item)}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(DownloadOneDriveFile, argv)


if __name__ == "__main__":
    main()
