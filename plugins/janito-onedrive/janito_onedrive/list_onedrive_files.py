"""ListOneDriveFiles: the items of a OneDrive folder, page after page."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool

from ._common import gate, guarded, invalid

ORDERS = ("name", "name desc", "lastModifiedDateTime", "lastModifiedDateTime desc",
          "size", "size desc")
MAX_LIMIT = 1000


@tool(permissions="r")
class ListOneDriveFiles(BaseTool):
    """List the files and folders in a OneDrive folder (the root by default)."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str = "", limit: int = 50, order_by: str = "name",
            folder_only: bool = False) -> dict[str, Any]:
        """List the items of a OneDrive folder with their size, dates and web link.

        Args:
            path: Folder to list, relative to the OneDrive root, such as "Documents/Projects";
                empty for the root.
            limit: Most items to return, 1 to 1000; `has_more` tells whether the folder holds more.
            order_by: Sort order: "name", "name desc", "lastModifiedDateTime",
                "lastModifiedDateTime desc", "size" or "size desc".
            folder_only: Return only sub-folders.
        """
        echo = {"path": path}
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            return invalid(f"limit must be between 1 and {MAX_LIMIT}", **echo)
        if order_by not in ORDERS:
            return invalid("order_by must be one of: " + ", ".join(ORDERS), **echo)
        return guarded(self, lambda: self._list(path, limit, order_by, folder_only), **echo)

    def _list(self, path: str, limit: int, order_by: str, folder_only: bool) -> dict[str, Any]:
        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, format_item, is_folder, item_action

        try:
            folder = clean_path(path)
        except ValueError as exc:
            return invalid(str(exc), path=path)
        self.report_start(f"Listing OneDrive folder /{folder}")
        graph = _common.client()
        params = {"$top": min(limit, 200), "$orderby": order_by}
        try:
            items, more = graph.collect(
                item_action(folder, "children"), f"listing '/{folder}'", params=params,
                limit=limit, keep=is_folder if folder_only else None)
        except GraphError as exc:
            if exc.status == 404:
                raise GraphError(_common.not_found("folder", folder), "not_found",
                                 status=404) from None
            raise
        formatted = [format_item(item) for item in items]
        self.report_result(f"{len(formatted)} item(s) in /{folder}" + (" (more)" if more else ""))
        return {
            "success": True,
            "path": folder,
            "items": formatted,
            "total_count": len(formatted),
            "has_more": more,
            "order_by": order_by,
            "folder_only": folder_only,
        }


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(ListOneDriveFiles, argv)


if __name__ == "__main__":
    main()
