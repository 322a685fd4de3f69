"""A OneDrive file or folder as the tools answer with it, and the typing their result types
need (imported when the tools are, so it imports nothing heavy)."""

from __future__ import annotations

import sys
from typing import Literal

# The tools' result types mark the keys a result may leave out with NotRequired, which
# typing has from 3.11 on.
if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
    from typing import TypedDict as TypedDict
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired as NotRequired
    from typing_extensions import TypedDict as TypedDict

ConflictBehavior = Literal["fail", "rename", "replace"]


class DriveItem(TypedDict):
    """A OneDrive file or folder (a value Microsoft Graph leaves out or mistypes is null).

    Attributes:
        id: Its id in its drive.
        name: Its name.
        path: Its path from the drive's root, for the other tools (null when a search
            could not find its folder).
        type: "file" or "folder".
        size: Its size in bytes (a folder's: everything in it).
        created: When it was created (ISO 8601, UTC).
        modified: When it was last changed (ISO 8601, UTC).
        web_url: Its page on OneDrive on the web.
        child_count: A folder's number of items.
        mime_type: A file's media type.
    """

    id: str | None
    name: str
    path: str | None
    type: Literal["file", "folder"]
    size: int | None
    created: str | None
    modified: str | None
    web_url: str | None
    child_count: NotRequired[int | None]
    mime_type: NotRequired[str | None]


class SharedItem(DriveItem):
    """A file or folder someone shared with you.

    Attributes:
        path: Its path in its own drive, for the other tools with drive_id (null when
            Microsoft Graph does not say).
        drive_id: The drive it lives in, for the other tools.
        drive_type: That drive's kind ("personal", "business", "documentLibrary").
        shared_by: Who shared it.
    """

    drive_id: str | None
    drive_type: str | None
    shared_by: str | None
