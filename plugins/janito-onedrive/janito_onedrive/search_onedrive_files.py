"""SearchOneDriveFiles: items whose name, metadata or content match a query."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool

from ._common import gate, guarded, invalid

MAX_LIMIT = 1000


@tool(permissions="r")
class SearchOneDriveFiles(BaseTool):
    """Search OneDrive for files and folders matching a query, in the whole drive or one folder."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, query: str, folder_path: str | None = None,
            file_type_filter: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Search OneDrive; OneDrive matches names, metadata and file content.

        Args:
            query: Text to search for, such as "quarterly report".
            folder_path: Search only inside this folder (and its sub-folders), such as "Documents";
                the whole drive when omitted.
            file_type_filter: Keep only files with this extension, such as "pdf" or ".docx".
            limit: Most results to return, 1 to 1000.
        """
        echo = {"query": query}
        if not isinstance(query, str) or not query.strip():
            return invalid("query must be a non-empty string", **echo)
        from ._graph import is_unicode

        if not is_unicode(query):
            return invalid("query must be valid Unicode text", **echo)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            return invalid(f"limit must be between 1 and {MAX_LIMIT}", **echo)
        extension = None
        if file_type_filter:
            extension = file_type_filter.strip().lower().lstrip(".")
            if not extension or "/" in extension:
                return invalid("file_type_filter must be an extension such as 'pdf'", **echo)
        return guarded(self, lambda: self._search(query, folder_path, extension, limit), **echo)

    def _search(self, query: str, folder_path: str | None, extension: str | None,
                limit: int) -> dict[str, Any]:
        import urllib.parse

        from . import _common
        from ._errors import GraphError
        from ._graph import clean_path, format_item, item_target

        try:
            folder = clean_path(folder_path or "")
        except ValueError as exc:
            return invalid(f"folder_path: {exc}", query=query)
        where = f"/{folder}" if folder else "the whole drive"
        self.report_start(f"Searching OneDrive ({where}) for {query!r}")
        # OData string literal: quotes doubled, then percent-encoded into the URL path.
        literal = urllib.parse.quote(query.replace("'", "''"), safe="")
        target = item_target(folder) + (":" if folder else "") + f"/search(q='{literal}')"

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
        formatted = [format_item(item) for item in items]
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


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(SearchOneDriveFiles, argv)


if __name__ == "__main__":
    main()
