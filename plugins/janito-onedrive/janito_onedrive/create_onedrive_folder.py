"""CreateOneDriveFolder: make a folder in OneDrive."""

from __future__ import annotations

from typing import Any, Literal

from janito_core import BaseTool, Failure, tool

from ._common import gate, guarded, invalid
from ._items import ConflictBehavior, DriveItem, TypedDict


class FolderMade(TypedDict):
    """What CreateOneDriveFolder answers.

    Attributes:
        path: The folder asked for, from the drive's root.
        folder: The folder (its path differs when OneDrive picked a free name).
        created: False when an existing folder was kept.
        conflict_behavior: What was asked for when the name was taken.
    """

    success: Literal[True]
    path: str
    folder: DriveItem
    created: bool
    conflict_behavior: ConflictBehavior


@tool(permissions="w")
class CreateOneDriveFolder(BaseTool):
    """Create a folder in OneDrive inside an existing parent folder."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str,
            conflict_behavior: Literal["fail", "replace", "rename"] = "fail") -> FolderMade | Failure:
        """Create a folder; its parent folder must already exist.

        Args:
            path: The new folder, relative to the OneDrive root, such as "Documents/Projects/2025".
            conflict_behavior: When the name is taken: "fail" (an error), "rename" (OneDrive picks
                a free name) or "replace".
        """
        echo = {"path": path, "conflict_behavior": conflict_behavior}
        return guarded(self, lambda: self._create(path, conflict_behavior), **echo)

    def _create(self, path: str, behavior: str) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, format_item, item_action, split_parent

        echo = {"path": path, "conflict_behavior": behavior}
        try:
            where = clean_path(path, allow_root=False)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        parent, name = split_parent(where)
        self.report_start(f"Creating OneDrive folder /{where}")
        graph = _common.client()
        body = {"name": name, "folder": {}, "@microsoft.graph.conflictBehavior": behavior}
        response = graph.request("POST", item_action(parent, "children"), json_body=body)
        if response.status == 409:
            raise GraphError(
                f"'/{where}' already exists; use conflict_behavior 'rename' or 'replace'",
                "conflict", status=409)
        if response.status == 404:
            raise GraphError(f"the parent folder '/{parent}' does not exist; create it first",
                             "not_found", status=404)
        if response.status not in (200, 201):
            from ._graph import graph_error

            raise graph_error(response, f"creating '/{where}'")
        folder = format_item(response.json())
        created = response.status == 201
        self.report_result(f"Folder /{folder['path']} " + ("created" if created else "ready"))
        return {"success": True, "path": where, "folder": folder, "created": created,
                "conflict_behavior": behavior}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(CreateOneDriveFolder, argv)


if __name__ == "__main__":
    main()
