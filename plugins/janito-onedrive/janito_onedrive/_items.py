"""A OneDrive file or folder as the tools answer with it, and the typing their result types
need (imported when the tools are, so it imports nothing heavy)."""

from __future__ import annotations

import sys
from typing import Annotated, Literal

# The tools' result types mark the keys a result may leave out with NotRequired, which
# typing has from 3.11 on.
if sys.version_info >= (3, 11):
    from typing import NotRequired as NotRequired
    from typing import TypedDict as TypedDict
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired as NotRequired
    from typing_extensions import TypedDict as TypedDict

ConflictBehavior = Literal["fail", "rename", "replace"]


# The descriptions are written in Annotated rather than a docstring so that SharedItem
# keeps them: typing's TypedDict forgets its bases before Python 3.12, docstrings with them.
class DriveItem(TypedDict):
    """A OneDrive file or folder (a value Microsoft Graph leaves out or mistypes is null)."""

    id: Annotated[str | None, "Its id in its drive."]
    name: str
    path: Annotated[str | None, "Its path from the drive's root, for the other tools (null "
                                "when a search could not find its folder)."]
    type: Literal["file", "folder"]
    size: Annotated[int | None, "Its size in bytes (a folder's: everything in it)."]
    created: Annotated[str | None, "When it was created (ISO 8601, UTC)."]
    modified: Annotated[str | None, "When it was last changed (ISO 8601, UTC)."]
    web_url: Annotated[str | None, "Its page on OneDrive on the web."]
    child_count: NotRequired[Annotated[int | None, "A folder's number of items."]]
    mime_type: NotRequired[Annotated[str | None, "A file's media type."]]


class SharedItem(DriveItem):
    """A file or folder someone shared with you; its path is in its own drive (null when
    Microsoft Graph does not say), for the other tools with drive_id."""

    drive_id: Annotated[str | None, "The drive it lives in, for the other tools."]
    drive_type: Annotated[str | None, 'That drive\'s kind ("personal", "business", '
                                      '"documentLibrary").']
    shared_by: Annotated[str | None, "Who shared it."]
