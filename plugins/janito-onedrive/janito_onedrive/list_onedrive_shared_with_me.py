"""ListOneDriveSharedWithMe: the files and folders other people shared with you."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Interval

from ._common import gate, guarded
from ._items import SharedItem, TypedDict

MAX_LIMIT = 1000


class SharedListing(TypedDict):
    """What ListOneDriveSharedWithMe answers.

    Attributes:
        items: What was shared with you, each with the drive it lives in.
        total_count: The items returned.
        has_more: Whether more were shared than were returned.
    """

    success: Literal[True]
    items: list[SharedItem]
    total_count: int
    has_more: bool


@tool(permissions="r")
class ListOneDriveSharedWithMe(BaseTool):
    """List the files and folders other people shared with you, with the drive each lives in."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, limit: Annotated[int, Interval(ge=1, le=MAX_LIMIT)] = 50) -> SharedListing | Failure:
        """List items shared with you; read one with its drive_id and path in the other tools.

        Args:
            limit: Most items to return.
        """
        return guarded(self, lambda: self._list(limit))

    def _list(self, limit: int) -> dict[str, Any]:
        from . import _common
        from ._graph import format_item, parent_path, text

        self.report_start("Listing what is shared with you on OneDrive")
        graph = _common.client()
        items, more = graph.collect("/me/drive/sharedWithMe", "listing what is shared with you",
                                    params=None, limit=limit)
        out: list[SharedItem] = []
        for entry in items:
            remote = entry.get("remoteItem") if isinstance(entry.get("remoteItem"), dict) else entry
            item = format_item({**remote, "name": entry.get("name") or remote.get("name")})
            reference = remote.get("parentReference") if isinstance(
                remote.get("parentReference"), dict) else {}
            folder = parent_path(remote)
            item["path"] = (f"{folder}/{item['name']}" if folder else item["name"]) \
                if isinstance(reference.get("path"), str) else None
            shared = remote.get("shared") if isinstance(remote.get("shared"), dict) else {}
            owner = shared.get("owner") if isinstance(shared.get("owner"), dict) else {}
            user = owner.get("user") if isinstance(owner.get("user"), dict) else {}
            out.append({**item, "drive_id": text(reference.get("driveId")),
                        "drive_type": text(reference.get("driveType")),
                        "shared_by": text(user.get("displayName")) or text(user.get("email"))})
        self.report_result(f"{len(out)} item(s) shared with you")
        return {"success": True, "items": out, "total_count": len(out), "has_more": more}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(ListOneDriveSharedWithMe, argv)


if __name__ == "__main__":
    main()
