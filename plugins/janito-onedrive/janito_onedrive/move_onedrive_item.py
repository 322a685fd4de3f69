"""MoveOneDriveItem: move or rename a OneDrive file or folder."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import AtLeastOneOf, Pattern

from ._common import gate, guarded, invalid
from ._items import ConflictBehavior, DriveItem, TypedDict


class Moved(TypedDict):
    """What MoveOneDriveItem answers.

    Attributes:
        path: The item's old path, from the drive's root.
        destination_folder: The folder asked for, as given.
        new_name: The name asked for, as given.
        conflict_behavior: What was asked for when the name was taken.
        new_path: Its path now.
        item: The item where it is now.
    """

    success: Literal[True]
    path: str
    destination_folder: str | None
    new_name: str | None
    conflict_behavior: ConflictBehavior
    new_path: str | None
    item: DriveItem


@tool(permissions="w")
class MoveOneDriveItem(BaseTool):
    """Move a OneDrive file or folder to another folder, rename it, or both."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str,
            destination_folder: Annotated[str | None, AtLeastOneOf("change")] = None,
            new_name: Annotated[str | None, Pattern(r"\S"), AtLeastOneOf("change")] = None,
            conflict_behavior: ConflictBehavior = "fail") -> Moved | Failure:
        """Move and/or rename an item in one step; at least one of destination_folder and new_name.

        Args:
            path: The item to move, relative to the OneDrive root, such as "Documents/draft.docx".
            destination_folder: The folder to move it into, such as "Archive/2025"; "" or "/" is
                the root; omitted keeps it in its folder.
            new_name: Its new name; omitted keeps the name.
            conflict_behavior: When the destination name is taken: "fail" (an error), "rename"
                (OneDrive picks a free name) or "replace" (the other item is replaced).
        """
        echo = {"path": path, "destination_folder": destination_folder, "new_name": new_name,
                "conflict_behavior": conflict_behavior}
        return guarded(self, lambda: self._move(path, destination_folder, new_name,
                                                conflict_behavior, echo), **echo)

    def _move(self, path: str, folder: str | None, new_name: str | None, behavior: str,
              echo: dict[str, Any]) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, conflict_query, format_item, graph_error, item_target, split_parent

        try:
            where = clean_path(path, allow_root=False)
            destination = clean_path(folder) if folder is not None else split_parent(where)[0]
            name = _name(new_name) if new_name else split_parent(where)[1]
        except ValueError as exc:
            return invalid(str(exc), **echo)
        target = f"{destination}/{name}" if destination else name
        if target == where:
            return invalid("the item is already there with that name", **echo)
        if (target + "/").startswith(where + "/"):
            return invalid("a folder cannot move into itself", **echo)
        self.report_start(f"Moving OneDrive /{where} to /{target}")
        graph = _common.client()
        body: dict[str, Any] = {"name": name}
        if folder is not None:
            body["parentReference"] = {"path": "/drive/root:" + (f"/{destination}" if destination
                                                                 else "")}
        response = graph.request("PATCH", item_target(where), json_body=body,
                                 params=conflict_query(behavior))
        if response.status == 404:
            raise GraphError(f"'/{where}' or the folder '/{destination}' does not exist",
                             "not_found", status=404)
        if response.status == 409:
            raise GraphError(f"'/{target}' already exists; use conflict_behavior 'rename' or "
                             "'replace'", "conflict", status=409)
        if response.status != 200:
            raise graph_error(response, f"moving '/{where}'")
        item = format_item(response.json())
        self.report_result(f"Moved to /{item['path']}")
        return {"success": True, **echo, "path": where, "new_path": item["path"], "item": item}


def _name(name: str) -> str:
    """A file or folder name: no slash, no '.' or '..', no control characters."""
    from ._graph import clean_path

    if "/" in name or "\\" in name:
        raise ValueError("new_name must be a name, not a path (use destination_folder to move)")
    return clean_path(name, allow_root=False)


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(MoveOneDriveItem, argv)


if __name__ == "__main__":
    main()
