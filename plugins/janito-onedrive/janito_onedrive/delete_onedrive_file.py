"""DeleteOneDriveFile: move a OneDrive file or folder to the recycle bin."""

from __future__ import annotations

from typing import Any, Literal

from janito_core import BaseTool, Failure, tool

from ._common import gate, guarded, invalid
from ._items import DriveItem, TypedDict


class Deleted(TypedDict):
    """What DeleteOneDriveFile answers.

    Attributes:
        path: The item, from the drive's root.
        dry_run: True when nothing was deleted, only looked up.
        deleted: Whether it went to the recycle bin.
        item: The item as it was.
    """

    success: Literal[True]
    path: str
    dry_run: bool
    deleted: bool
    item: DriveItem


@tool(permissions="w")
class DeleteOneDriveFile(BaseTool):
    """Delete a OneDrive file or folder (it goes to the OneDrive recycle bin)."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, dry_run: bool = False) -> Deleted | Failure:
        """Delete a file or a folder with everything in it; dry_run only shows what would go.

        Args:
            path: The file or folder, relative to the OneDrive root, such as "Documents/old.txt".
            dry_run: Only look the item up and report what would be deleted.
        """
        echo = {"path": path, "dry_run": dry_run}
        return guarded(self, lambda: self._delete(path, dry_run), **echo)

    def _delete(self, path: str, dry_run: bool) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, format_item, item_target

        echo = {"path": path, "dry_run": dry_run}
        try:
            where = clean_path(path, allow_root=False)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        self.report_start(("Checking" if dry_run else "Deleting") + f" OneDrive /{where}")
        graph = _common.client()
        try:
            item = graph.get_json(item_target(where), f"reading '/{where}'")
        except GraphError as exc:
            if exc.status == 404:
                raise GraphError(_common.not_found("item", where), "not_found", status=404) from None
            raise
        info = format_item(item)
        if dry_run:
            self.report_result(f"Would delete {info['type']} /{where}")
            return {"success": True, "path": where, "dry_run": True, "deleted": False,
                    "item": info}
        response = graph.request("DELETE", item_target(where))
        if response.status == 404:
            raise GraphError(_common.not_found("item", where), "not_found", status=404)
        if response.status not in (200, 204):
            from ._graph import graph_error

            raise graph_error(response, f"deleting '/{where}'")
        self.report_result(f"Deleted {info['type']} /{where}")
        return {"success": True, "path": where, "dry_run": False, "deleted": True, "item": info}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(DeleteOneDriveFile, argv)


if __name__ == "__main__":
    main()
