"""ListFolders: the folders (and Gmail labels) of the mailbox."""

from __future__ import annotations

from typing import Any

from janito_core import tool
from janito_core.results import counted

from ._base import MailTool
from ._imap import imap_session
from ._settings import Settings


@tool(permissions="r")
class ListFolders(MailTool):
    """List the mail folders (on Gmail, labels and [Gmail] folders), optionally with counts."""

    def run(self, include_counts: bool = False) -> dict[str, Any]:
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
