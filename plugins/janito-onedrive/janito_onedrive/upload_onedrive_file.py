"""UploadOneDriveFile: put text or a workspace file on OneDrive, resumably when large."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from janito_core import BaseTool, Failure, WorkspaceError, tool
from janito_core.constraints import ExactlyOneOf
from janito_core.results import counted

from ._common import gate, guarded, invalid
from ._items import ConflictBehavior, DriveItem, NotRequired, TypedDict

if TYPE_CHECKING:
    from ._upload import Source


class Uploaded(TypedDict):
    """What UploadOneDriveFile answers.

    Attributes:
        path: Where the file is on OneDrive (with the name OneDrive picked on "rename").
        size: Bytes uploaded.
        method: "simple" (one request) or "session" (resumable, in fragments).
        fragments: Fragments sent.
        resumed: Times the upload picked up again after a fragment was lost.
        overwrite: Whether an existing file could be replaced.
        conflict_behavior: What was done when the name was taken.
        file: The file on OneDrive.
        local_path: The workspace file uploaded.
    """

    success: Literal[True]
    path: str
    size: int
    method: Literal["simple", "session"]
    fragments: int
    resumed: int
    overwrite: bool
    conflict_behavior: ConflictBehavior
    file: DriveItem
    local_path: NotRequired[str]


@tool(permissions="w")
class UploadOneDriveFile(BaseTool):
    """Upload text or a workspace file to OneDrive; large files go in resumable chunks."""

    reads_paths: ClassVar[tuple[str, ...]] = ("local_path",)

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, content: Annotated[str | None, ExactlyOneOf("source")] = None,
            local_path: Annotated[str | None, ExactlyOneOf("source")] = None,
            overwrite: bool = False,
            conflict_behavior: ConflictBehavior | None = None,
            ) -> Uploaded | Failure:
        """Upload to OneDrive: give either content (text) or local_path (a workspace file).

        Args:
            path: Destination in OneDrive, such as "Documents/report.txt"; a path ending in "/" is
                a folder and keeps the local file's name.
            content: Text to upload, stored as UTF-8.
            local_path: A file in the workspace to upload instead of content.
            overwrite: Replace an existing OneDrive file at path; otherwise an existing file is a
                conflict. Same as conflict_behavior "replace".
            conflict_behavior: When path is taken: "fail" (an error), "rename" (OneDrive picks a
                free name, given back as the file's path) or "replace"; overrides overwrite.
        """
        echo = {"path": path}
        behavior = conflict_behavior or ("replace" if overwrite else "fail")
        return guarded(self, lambda: self._upload(path, content, local_path, behavior), **echo)

    def _upload(self, path: str, content: str | None, local_path: str | None,
                overwrite: str) -> dict[str, Any]:
        import os

        from ._upload import Source

        echo: dict[str, Any] = {"path": path}
        if local_path is None:
            if path.rstrip().endswith(("/", "\\")):
                return invalid("with content, path must name the file, not a folder", **echo)
            try:
                data = (content or "").encode("utf-8")
            except UnicodeEncodeError:
                return invalid("content must be valid Unicode text", **echo)
            return self._send(path, Source(data=data), overwrite, echo, local_path)
        from janito_core.workspace import NotRegularFile

        echo["local_path"] = local_path
        try:
            fd, info, shown = self.workspace.open_regular(local_path)
        except WorkspaceError as exc:
            return {"success": False, "error": str(exc), "error_type": exc.error_type, **echo}
        except FileNotFoundError:
            return {"success": False, "error_type": "not_found",
                    "error": f"{local_path} is not found in the workspace", **echo}
        except IsADirectoryError:
            return {"success": False, "error_type": "is_directory",
                    "error": f"{local_path} is a folder in the workspace", **echo}
        except NotRegularFile:
            return {"success": False, "error_type": "not_a_file",
                    "error": f"{local_path} is not a regular file (a FIFO, socket or device)",
                    **echo}
        except OSError as exc:
            return {"success": False, "error_type": "read_failed",
                    "error": f"cannot open {local_path}: {exc.strerror or exc}", **echo}
        try:
            if path.endswith("/") or not path.strip():
                path = path + shown.rsplit("/", 1)[-1]
            return self._send(path, Source(fd=fd, size=info.st_size), overwrite, echo,
                              local_path)
        finally:
            os.close(fd)

    def _send(self, path: str, source: Source, behavior: str, echo: dict[str, Any],
              local_path: str | None) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, format_item, split_parent
        from ._upload import upload

        try:
            where = clean_path(path, allow_root=False)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        self.report_start(f"Uploading {counted(source.size, 'byte')} to OneDrive /{where}")
        graph = _common.client()
        try:
            outcome = upload(graph, where, source, behavior, self.report_progress)
        except GraphError as exc:
            parent, name = split_parent(where)
            if exc.status == 409:
                message = (f"'/{where}' conflicts with an existing item that cannot be replaced "
                           "(a folder of that name?)" if behavior != "fail" else
                           f"'/{where}' already exists on OneDrive; pass overwrite=true to replace it")
                raise GraphError(message, "conflict", status=409) from None
            if exc.status == 404:
                raise GraphError(f"the OneDrive folder '/{parent}' for {name!r} was not found",
                                 "not_found", status=404) from None
            raise
        info = format_item(outcome["item"])
        self.report_result(f"Uploaded /{info['path']} ({counted(source.size, 'byte')}, {outcome['method']})")
        return {
            "success": True,
            "path": info["path"] or where,
            "size": source.size,
            "method": outcome["method"],
            "fragments": outcome["fragments"],
            "resumed": outcome["resumed"],
            "overwrite": behavior == "replace",
            "conflict_behavior": behavior,
            "file": info,
            **({"local_path": local_path} if local_path is not None else {}),
        }


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(UploadOneDriveFile, argv)


if __name__ == "__main__":
    main()
