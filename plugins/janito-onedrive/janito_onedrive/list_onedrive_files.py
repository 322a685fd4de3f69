"""ListOneDriveFiles: the items of a OneDrive folder, page after page."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Interval

from ._common import gate, guarded, invalid
from ._items import DriveItem, NotRequired, TypedDict

MAX_LIMIT = 1000
LOCAL_SORT_CAP = 5000
"""Items read to sort a folder locally when the service refuses the order (OneDrive for
Business sorts children by name only)."""


OrderBy = Literal["name", "name desc", "lastModifiedDateTime", "lastModifiedDateTime desc",
                  "size", "size desc"]


class FolderListing(TypedDict):
    """What ListOneDriveFiles answers.

    Attributes:
        path: The folder listed, from the drive's root ("" for the root).
        drive_id: The drive listed, when not yours.
        items: Its files and folders, in order.
        total_count: The items returned.
        has_more: Whether the folder holds more than were returned.
        order_by: The order of the items.
        folder_only: Whether only folders were asked for.
        sorted_locally: True when the drive would not sort this way and janito did.
        note: How far a local sort went.
    """

    success: Literal[True]
    path: str
    drive_id: NotRequired[str]
    items: list[DriveItem]
    total_count: int
    has_more: bool
    order_by: OrderBy
    folder_only: bool
    sorted_locally: NotRequired[bool]
    note: NotRequired[str]


@tool(permissions="r")
class ListOneDriveFiles(BaseTool):
    """List the files and folders in a OneDrive folder (the root by default)."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str = "", limit: Annotated[int, Interval(ge=1, le=MAX_LIMIT)] = 50,
            order_by: OrderBy = "name",
            folder_only: bool = False, drive_id: str | None = None) -> FolderListing | Failure:
        """List the items of a OneDrive folder with their size, dates and web link.

        Args:
            path: Folder to list, relative to the OneDrive root, such as "Documents/Projects";
                empty for the root.
            limit: Most items to return; `has_more` tells whether the folder holds more.
            order_by: Sort order: "name", "name desc", "lastModifiedDateTime",
                "lastModifiedDateTime desc", "size" or "size desc".
            folder_only: Return only sub-folders.
            drive_id: Another drive to list, such as a SharePoint document library or a drive
                shared with you (its id, from ListOneDriveSharedWithMe); omitted: your OneDrive.
        """
        echo: dict[str, Any] = {"path": path}
        if drive_id:
            echo["drive_id"] = drive_id
        return guarded(self, lambda: self._list(path, limit, order_by, folder_only, drive_id,
                                                echo), **echo)

    def _list(self, path: str, limit: int, order_by: str, folder_only: bool,
              drive_id: str | None, echo: dict[str, Any]) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import check_drive_id, clean_path, format_item, is_folder, item_action

        try:
            folder = clean_path(path)
            drive = check_drive_id(drive_id)
        except ValueError as exc:
            return invalid(str(exc), **echo)
        self.report_start(f"Listing OneDrive folder /{folder}")
        graph = _common.client()
        target = item_action(folder, "children", drive)
        keep = is_folder if folder_only else None
        sorted_locally = False
        try:
            try:
                items, more = graph.collect(
                    target, f"listing '/{folder}'",
                    params={"$top": min(limit, 200), "$orderby": order_by}, limit=limit, keep=keep)
            except GraphError as exc:
                if exc.status != 400 or order_by.split(" ")[0] == "name":
                    raise
                # OneDrive for Business orders children by name only: read them and sort here.
                items, more = graph.collect(target, f"listing '/{folder}'",
                                            params={"$top": 200}, limit=LOCAL_SORT_CAP, keep=keep)
                items = sort_items(items, order_by)
                more = more or len(items) > limit
                items = items[:limit]
                sorted_locally = True
        except GraphError as exc:
            if exc.status == 404:
                raise GraphError(_common.not_found("folder", folder), "not_found",
                                 status=404) from None
            raise
        formatted = [format_item(item) for item in items]
        self.report_result(f"{len(formatted)} item(s) in /{folder}" + (" (more)" if more else ""))
        result: dict[str, Any] = {
            **echo,
            "success": True,
            "path": folder,
            "items": formatted,
            "total_count": len(formatted),
            "has_more": more,
            "order_by": order_by,
            "folder_only": folder_only,
        }
        if sorted_locally:
            result["sorted_locally"] = True
            if more:
                result["note"] = (f"this drive sorts by name only; the first {LOCAL_SORT_CAP} "
                                  f"items were sorted by {order_by} here")
        return result


def sort_items(items: list[dict[str, Any]], order_by: str) -> list[dict[str, Any]]:
    """``items`` in the order Graph would give for ``order_by`` (a key missing sorts first)."""
    field, _, direction = order_by.partition(" ")

    def key(item: dict[str, Any]) -> tuple[int, Any]:
        value = item.get(field)
        if value is None:
            return (0, "")
        return (1, value.lower() if isinstance(value, str) and field == "name" else value)

    return sorted(items, key=key, reverse=direction == "desc")


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(ListOneDriveFiles, argv)


if __name__ == "__main__":
    main()
