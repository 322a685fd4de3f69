"""SearchOneDriveFiles: items whose name, metadata or content match a query."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Interval, Pattern

from ._common import gate, guarded, invalid
from ._items import DriveItem, TypedDict

MAX_LIMIT = 1000
#: An extension, with or without its dot, or "" for none: no "/" and something besides
#: dots and spaces.
EXTENSION = r"^(|[^/]*[^/.\s][^/]*)$"
MAX_PATH_LOOKUPS = 50
"""Parent folders looked up to give search results their paths (OneDrive for Business and
SharePoint search results carry no ``parentReference.path``)."""


class Found(TypedDict):
    """What SearchOneDriveFiles answers.

    Attributes:
        query: The query, as given.
        folder_path: The folder searched, null for the whole drive.
        file_type_filter: The extension kept, without its dot.
        items: The matches, in OneDrive's order.
        total_count: The matches returned.
        has_more: Whether OneDrive has more matches.
    """

    success: Literal[True]
    query: str
    folder_path: str | None
    file_type_filter: str | None
    items: list[DriveItem]
    total_count: int
    has_more: bool


@tool(permissions="r")
class SearchOneDriveFiles(BaseTool):
    """Search OneDrive for files and folders matching a query, in the whole drive or one folder."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, query: Annotated[str, Pattern(r"\S")], folder_path: str | None = None,
            file_type_filter: Annotated[str, Pattern(EXTENSION)] | None = None,
            limit: Annotated[int, Interval(ge=1, le=MAX_LIMIT)] = 20,
            drive_id: str | None = None) -> Found | Failure:
        """Search OneDrive; OneDrive matches names, metadata and file content.

        Args:
            query: Text to search for, such as "quarterly report" (not only spaces).
            folder_path: Search only inside this folder (and its sub-folders), such as "Documents";
                the whole drive when omitted.
            file_type_filter: Keep only files with this extension, such as "pdf" or ".docx".
            limit: Most results to return.
            drive_id: Search another drive, such as a SharePoint document library (its id);
                omitted: your OneDrive.
        """
        echo = {"query": query}
        extension = None
        if file_type_filter:
            extension = file_type_filter.strip().lower().lstrip(".")
        return guarded(self, lambda: self._search(query, folder_path, extension, limit, drive_id),
                       **echo)

    def _search(self, query: str, folder_path: str | None, extension: str | None,
                limit: int, drive_id: str | None = None) -> dict[str, Any]:
        import urllib.parse

        from . import _common
        from ._errors import GraphError
        from ._graph import check_drive_id, clean_path, format_item, item_target

        try:
            folder = clean_path(folder_path or "")
            drive = check_drive_id(drive_id)
        except ValueError as exc:
            return invalid(f"{'folder_path' if 'drive' not in str(exc) else 'drive_id'}: {exc}",
                           query=query)
        where = f"/{folder}" if folder else "the whole drive"
        self.report_start(f"Searching OneDrive ({where}) for {query!r}")
        # OData string literal: quotes doubled, then percent-encoded into the URL path.
        literal = urllib.parse.quote(query.replace("'", "''"), safe="")
        target = item_target(folder, drive) + (":" if folder else "") + f"/search(q='{literal}')"

        def keep(item: dict[str, Any]) -> bool:
            if extension is None:
                return True
            name = str(item.get("name") or "").lower()
            return isinstance(item.get("file"), dict) and name.endswith("." + extension)

        graph = _common.client()
        try:
            items, more = graph.collect(target, f"the search for {query!r}",
                                        params={"$top": min(limit, 200)}, limit=limit, keep=keep)
        except GraphError as exc:
            if exc.status == 404:
                raise GraphError(_common.not_found("folder", folder), "not_found",
                                 status=404) from None
            raise
        resolve_paths(graph, items, drive)
        formatted = [format_item(item) for item in items]
        for item, shown in zip(items, formatted, strict=True):
            if item.get("_path_unknown"):
                shown["path"] = None
        self.report_result(f"{len(formatted)} match(es) for {query!r}")
        return {
            "success": True,
            "query": query,
            "folder_path": folder or None,
            "file_type_filter": extension,
            "items": formatted,
            "total_count": len(formatted),
            "has_more": more,
        }


def resolve_paths(graph: Any, items: list[dict[str, Any]], drive: str | None) -> None:
    """Give each item without ``parentReference.path`` the path of its parent, looked up by
    the parent's id (once per parent, at most MAX_PATH_LOOKUPS). An item whose parent cannot
    be found is marked ``_path_unknown``."""
    import urllib.parse

    from ._graph import drive_root, parent_path

    known: dict[str, str | None] = {}
    for item in items:
        reference = item.get("parentReference")
        if not isinstance(reference, dict) or isinstance(reference.get("path"), str):
            continue
        parent_id = reference.get("id")
        if not isinstance(parent_id, str) or not parent_id:
            item["_path_unknown"] = True
            continue
        if parent_id not in known:
            known[parent_id] = None
            if len(known) <= MAX_PATH_LOOKUPS:
                where = drive_root(drive)
                response = graph.request("GET", f"{where}/items/"
                                         + urllib.parse.quote(parent_id, safe="!"))
                parent = response.json() if response.status == 200 else None
                if isinstance(parent, dict):
                    if isinstance(parent.get("root"), dict):
                        known[parent_id] = ""
                    elif isinstance(parent.get("parentReference"), dict) and \
                            isinstance(parent["parentReference"].get("path"), str):
                        above = parent_path(parent)
                        name = str(parent.get("name") or "")
                        known[parent_id] = f"{above}/{name}" if above else name
        folder = known[parent_id]
        if folder is None:
            item["_path_unknown"] = True
        else:
            reference["path"] = "/drive/root:" + ("/" + urllib.parse.quote(folder) if folder else "")


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(SearchOneDriveFiles, argv)


if __name__ == "__main__":
    main()
