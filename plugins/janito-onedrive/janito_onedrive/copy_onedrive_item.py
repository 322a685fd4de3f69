"""CopyOneDriveItem: copy a OneDrive file or folder, waiting for OneDrive's copy to finish."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, tool
from janito_core.constraints import Interval

from ._common import gate, guarded, invalid
from ._items import ConflictBehavior, DriveItem, NotRequired, TypedDict
from .move_onedrive_item import _name

DEFAULT_WAIT = 60
MAX_WAIT = 600


class Copied(TypedDict):
    """What CopyOneDriveItem answers.

    Attributes:
        path: The item copied, from the drive's root.
        destination_folder: The folder asked for, as given.
        new_name: The name asked for, as given.
        conflict_behavior: What was asked for when the name was taken.
        new_path: The copy's path (once done, where OneDrive put it).
        completed: False when OneDrive was still copying when the wait ended.
        item: The copy, once done.
        percent_complete: How far a copy still running had got, when OneDrive said.
        note: What a copy still running means.
    """

    success: Literal[True]
    path: str
    destination_folder: str | None
    new_name: str | None
    conflict_behavior: ConflictBehavior
    new_path: str | None
    completed: bool
    item: NotRequired[DriveItem]
    percent_complete: NotRequired[float | None]
    note: NotRequired[str]


@tool(permissions="w")
class CopyOneDriveItem(BaseTool):
    """Copy a OneDrive file or folder into a folder, optionally under a new name."""

    open_world = True  # Microsoft Graph

    @classmethod
    def should_load(cls) -> bool:
        return gate(cls)

    def run(self, path: str, destination_folder: str | None = None, new_name: str | None = None,
            conflict_behavior: ConflictBehavior = "fail",
            wait_seconds: Annotated[int, Interval(ge=0, le=MAX_WAIT)] = DEFAULT_WAIT,
            ) -> Copied | Failure:
        """Copy an item; OneDrive copies in the background and this waits for it to finish.

        Args:
            path: The item to copy, relative to the OneDrive root, such as "Documents/plan.xlsx".
            destination_folder: The folder to copy it into ("" or "/" for the root); omitted: the
                item's own folder (then give new_name or conflict_behavior "rename").
            new_name: The copy's name; omitted keeps the name.
            conflict_behavior: When the name is taken: "fail" (an error), "rename" (OneDrive
                picks a free name) or "replace".
            wait_seconds: How long to wait for the copy, in seconds; a copy still running then is
                reported with its progress and keeps going on OneDrive.
        """
        echo = {"path": path, "destination_folder": destination_folder, "new_name": new_name,
                "conflict_behavior": conflict_behavior}
        return guarded(self, lambda: self._copy(path, destination_folder, new_name,
                                                conflict_behavior, wait_seconds, echo), **echo)

    def _copy(self, path: str, folder: str | None, new_name: str | None, behavior: str,
              wait: int, echo: dict[str, Any]) -> dict[str, Any]:
        import time

        from . import _common
        from ._errors import GraphError, remember_secret
        from ._graph import (
            _sleep,
            clean_path,
            conflict_query,
            format_item,
            graph_error,
            item_action,
            item_target,
            split_parent,
        )

        try:
            where = clean_path(path, allow_root=False)
            destination = clean_path(folder) if folder is not None else split_parent(where)[0]
            name = _name(new_name) if new_name else split_parent(where)[1]
        except ValueError as exc:
            return invalid(str(exc), **echo)
        target = f"{destination}/{name}" if destination else name
        if target == where and behavior != "rename":
            return invalid("the copy would replace the item itself; give new_name, another "
                           "destination_folder or conflict_behavior 'rename'", **echo)
        if (target + "/").startswith(where + "/") and target != where:
            return invalid("a folder cannot be copied into itself", **echo)
        self.report_start(f"Copying OneDrive /{where} to /{target}")
        graph = _common.client()
        body = {"name": name,
                "parentReference": {"path": "/drive/root:" + (f"/{destination}" if destination
                                                              else "")}}
        response = graph.request("POST", item_action(where, "copy"), json_body=body,
                                 params=conflict_query(behavior))
        if response.status == 404:
            raise GraphError(f"'/{where}' or the folder '/{destination}' does not exist",
                             "not_found", status=404)
        if response.status == 409:
            raise GraphError(f"'/{target}' already exists; use conflict_behavior 'rename' or "
                             "'replace'", "conflict", status=409)
        if response.status not in (200, 201, 202):
            raise graph_error(response, f"copying '/{where}'")
        monitor = response.headers.get("Location")
        if response.status in (200, 201) or not monitor:
            item = response.json() if response.body else None
            if isinstance(item, dict) and item.get("id"):
                return self._done(echo, where, format_item(item))
        if not monitor:
            raise GraphError("Microsoft Graph accepted the copy without a monitor URL",
                             "invalid_response")
        remember_secret(monitor)  # it is pre-authenticated, like an upload URL
        deadline = time.monotonic() + wait
        delay = 0.2
        status: dict[str, Any] = {}
        while True:
            answer = graph.request("GET", monitor, authenticated=False)
            if answer.status not in (200, 202, 303):
                raise graph_error(answer, f"asking how the copy of '/{where}' goes")
            status = answer.json() if answer.body else {}
            state = str(status.get("status") or "")
            if answer.status == 303 or state == "completed":
                break
            if state == "failed":
                error = status.get("error") if isinstance(status.get("error"), dict) else {}
                raise GraphError(f"OneDrive could not copy '/{where}': "
                                 f"{error.get('message') or error.get('code') or 'it failed'}",
                                 "copy_failed")
            percent = status.get("percentageComplete")
            if not isinstance(percent, (int, float)) or isinstance(percent, bool):
                percent = None
            if percent is not None:
                self.report_progress(f"Copy {percent:.0f}% done")
            if time.monotonic() + delay > deadline:
                self.report_result(f"Copy of /{where} still running on OneDrive")
                return {"success": True, **echo, "path": where, "new_path": target,
                        "completed": False, "percent_complete": percent,
                        "note": "OneDrive is still copying; the copy appears when it finishes"}
            _sleep(delay)
            delay = min(delay * 2, 5.0)
        resource = status.get("resourceId")
        item_json = None
        if isinstance(resource, str) and resource:
            got = graph.request("GET", "/me/drive/items/" + resource)
            if got.status == 200:
                item_json = got.json()
        if item_json is None:
            item_json = graph.get_json(item_target(target), f"reading the copy '/{target}'")
        return self._done(echo, where, format_item(item_json))

    def _done(self, echo: dict[str, Any], where: str, item: DriveItem) -> dict[str, Any]:
        self.report_result(f"Copied to /{item['path']}")
        return {"success": True, **echo, "path": where, "new_path": item["path"],
                "completed": True, "item": item}


def main(argv: list[str] | None = None) -> None:
    from janito_core.harness import run_main

    run_main(CopyOneDriveItem, argv)


if __name__ == "__main__":
    main()
