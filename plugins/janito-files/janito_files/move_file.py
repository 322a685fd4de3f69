"""MoveFile: move or rename a file or folder without ever losing the source."""

from __future__ import annotations

import errno
import stat
import sys
from typing import Any, ClassVar, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core._atomic import read_only

from ._common import TypedDict, echoed, invalid, kind_of, locate, os_failure, read_only_failure, safe_text


class MovedFile(TypedDict):
    """What MoveFile answers.

    Attributes:
        source: Where it was, as the workspace showed it.
        destination: Where it is now.
        kind: "file", "directory", "symlink" or "other".
        replaced: True when an existing file at the destination was replaced.
        method: "rename", or "copy" when it was copied across filesystems and removed.
    """

    success: Literal[True]
    source: str
    destination: str
    kind: str
    replaced: bool
    method: str


@tool(permissions="w")
class MoveFile(BaseTool):
    """Move or rename a file or folder inside the workspace.

    Across filesystems the source is copied, synced to disk and only then removed, so an
    interrupted move leaves the source in place. An existing destination is replaced only
    when overwrite is true, and never when it is a folder.
    """

    # The source is read (a copy, across filesystems) as well as removed: a rule on what
    # may be read binds a move too.
    reads_paths: ClassVar[tuple[str, ...]] = ("source",)

    writes_paths: ClassVar[tuple[str, ...]] = ("source", "destination")

    renamed_parameters: ClassVar[dict[str, str]] = {
        "src_path": "renamed to 'source'",
        "dest_path": "renamed to 'destination'",
    }

    def run(self, source: str, destination: str, overwrite: bool = False,
            create_dirs: bool = False, preserve_metadata: bool = True) -> MovedFile | Failure:
        """Move "source" to "destination".

        Args:
            source: The file or folder to move, relative to the workspace root.
            destination: Its new path (the full new name), or a folder to move it into when
                it ends with "/".
            overwrite: Replace an existing destination file.
            create_dirs: Make the destination's missing parent folders; otherwise they must
                exist.
            preserve_metadata: Keep the mode and modification time. They are always kept
                (a rename keeps them, a copy across filesystems restores them); false is
                accepted and changes nothing.
        """
        echo = {"source": echoed(source), "destination": echoed(destination)}
        where, refused = locate(self, source, "source", follow=False, action="find")
        if where is None:
            return {**(refused or invalid("no source given")), **echo}
        with where:
            if destination.endswith("/") and not where.is_root:
                destination = destination + where.name
            target, refused = locate(self, destination, "destination", follow=False,
                                     make_parents=create_dirs, action="reach")
            if target is None:
                failed = {**(refused or invalid("no destination given")), **echo}
                if failed.get("error_type") == "not_found" and not create_dirs:
                    failed["error"] += ("; the destination folder does not exist: pass "
                                        "create_dirs=true to make it")
                return failed
            with target:
                return self._move(where, target, overwrite, echo)

    def _move(self, source: Any, target: Any, overwrite: bool,
              echo: dict[str, Any]) -> dict[str, Any]:
        src_shown, dest_shown = safe_text(source.shown), safe_text(target.shown)
        if source.is_root:
            return failure("refusing to move the workspace root", "invalid_arguments", **echo)
        try:
            src_info = source.stat()
        except OSError as exc:
            return os_failure(exc, f"find {src_shown}", **echo)
        src_kind = kind_of(src_info.st_mode)
        if source.parts == target.parts:
            return invalid("source and destination are the same path", **echo)
        if src_kind == "directory" and target.parts[:len(source.parts)] == source.parts:
            return invalid("cannot move a folder into itself", **echo)
        if target.is_root:
            return failure("the workspace root is an existing folder; give the full new path",
                           "file_exists", **echo)
        try:
            dest_info = target.lookup()
        except OSError as exc:
            return os_failure(exc, f"inspect {dest_shown}", **echo)
        if dest_info is not None:
            if stat.S_ISDIR(dest_info.st_mode):
                return failure(f"{dest_shown} is an existing folder; give the full new path "
                               "(folders are never overwritten)", "file_exists", **echo)
            if not overwrite:
                return failure(f"{dest_shown} already exists; pass overwrite=true to replace "
                               "it", "file_exists", **echo)
            if src_kind == "directory":
                return failure(f"cannot replace the file {dest_shown} with a folder",
                               "file_exists", **echo)
            if stat.S_ISREG(dest_info.st_mode) and read_only(dest_info):
                return read_only_failure(
                    f"replace {dest_shown}", f"it is marked read-only (mode "
                    f"{stat.S_IMODE(dest_info.st_mode):04o}) and is left as it is", **echo)
        self.report_start(f"Moving {src_shown} to {dest_shown}")
        try:
            if dest_info is not None and (dest_info.st_dev, dest_info.st_ino) == \
                    (src_info.st_dev, src_info.st_ino):
                # Two names of one file: rename() would succeed and change nothing.
                source.remove()
                method = "rename"
            else:
                method = self._transfer(source, target, src_kind, overwrite)
        except FileExistsError:
            return failure(f"{dest_shown} already exists; pass overwrite=true to replace it",
                           "file_exists", **echo)
        except OSError as exc:
            self.report_error(f"could not move {src_shown}: {exc.strerror or exc}")
            result = os_failure(exc, f"move {src_shown}", **echo)
            result["source_kept"] = source.lookup() is not None
            return result
        self.report_result(f"Moved {src_shown} to {dest_shown}")
        return {"success": True, **echo, "source": src_shown, "destination": dest_shown,
                "kind": src_kind, "replaced": dest_info is not None, "method": method}

    def _transfer(self, source: Any, target: Any, kind: str, overwrite: bool) -> str:
        """Rename, or across filesystems copy then remove; "rename" or "copy"."""
        try:
            source.rename_to(target, overwrite=overwrite)
            return "rename"
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        from ._copy import copy_file, copy_link, copy_tree

        # Across filesystems: the copy is complete and on disk before the source goes.
        if kind == "directory":
            copy_tree(self.workspace, source.shown, source, target)
            source.rmdir(recursive=True)
        elif kind == "symlink":
            copy_link(source, target, overwrite=overwrite)
            source.remove()
        elif kind == "file":
            copy_file(source, target, overwrite=overwrite)
            source.remove()
        else:
            from janito_core.workspace import NotRegularFile

            raise NotRegularFile(errno.EINVAL, "a FIFO, socket or device cannot be moved to "
                                 "another filesystem", source.shown)
        source.sync()
        return "copy"


def main(argv: list[str] | None = None) -> int:
    """Run MoveFile from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(MoveFile, argv)


if __name__ == "__main__":
    sys.exit(main())
