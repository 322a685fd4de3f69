"""ListFolders: the folders (and Gmail labels) of the mailbox."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool
from janito_core.results import counted

from ._base import MailTool
from ._imap import imap_session
from ._results import NotRequired, TypedDict
from ._settings import Settings


class FolderRow(TypedDict):
    name: Annotated[str, "The folder's name, for the other tools."]
    delimiter: Annotated[str | None, "What separates the levels of its name."]
    flags: Annotated[list[str], "Its IMAP attributes."]
    special_use: Annotated[str | None, 'What it is for: "inbox", "sent", "trash", "drafts", ...']
    selectable: Annotated[bool, "False for a folder that only holds folders."]
    messages: NotRequired[Annotated[int, "Its messages."]]
    unread: NotRequired[Annotated[int, "Its unread messages."]]


class Folders(TypedDict):
    success: Literal[True]
    include_counts: bool
    gmail: Annotated[bool, "Whether the server is Gmail (folders are labels there)."]
    count: int
    folders: list[FolderRow]


@tool(permissions="r")
class ListFolders(MailTool):
    """List the mail folders (on Gmail, labels and [Gmail] folders), optionally with counts."""

    def run(self, include_counts: bool = False) -> Folders | Failure:
        """List every folder of the mailbox with its special use (inbox, sent, trash, ...).

        Args:
            include_counts: Also give each folder's total and unread message counts
                (one STATUS per folder, so slower on large accounts).
        """

        def action(settings: Settings) -> dict[str, Any]:
            self.say("start", f"Listing folders on {settings.imap_host}")
            with imap_session(settings) as mailbox:
                folders = mailbox.folders()
                if include_counts:
                    for row in folders:
                        if not row["selectable"]:
                            continue
                        status = mailbox.client.folder_status(row["name"],
                                                              ["MESSAGES", "UNSEEN"])
                        row["messages"] = int(status.get(b"MESSAGES", 0))
                        row["unread"] = int(status.get(b"UNSEEN", 0))
                for row in folders:
                    if row["name"].upper() == "INBOX":
                        row["special_use"] = row["special_use"] or "inbox"
                gmail = mailbox.gmail
            self.say("result", f"{counted(len(folders), 'folder')}")
            return {"success": True, "include_counts": include_counts, "gmail": gmail,
                    "count": len(folders), "folders": folders}

        return self.execute(action, include_counts=include_counts)


def main(argv: list[str] | None = None) -> int:
    """Run ListFolders from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ListFolders, argv)


if __name__ == "__main__":
    main()
