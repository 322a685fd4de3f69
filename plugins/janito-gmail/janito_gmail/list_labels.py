"""ListLabels: the Gmail labels of the account."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool

from . import _labels
from ._base import MailTool
from ._imap import imap_session
from ._results import NotRequired, TypedDict
from ._settings import Settings


class Label(TypedDict):
    name: Annotated[str, "The label's name, for the other tools."]
    messages: NotRequired[Annotated[int, "Its messages."]]
    unread: NotRequired[Annotated[int, "Its unread messages."]]


class SystemLabel(Label):
    special_use: Annotated[str | None, 'What it is for: "inbox", "sent", "trash", ...']


class Labels(TypedDict):
    success: Literal[True]
    count: Annotated[int, "Your own labels."]
    labels: Annotated[list[Label], "Your own labels."]
    system: Annotated[list[SystemLabel], "Gmail's own folders (Inbox, Sent Mail, ...)."]


@tool(permissions="r")
class ListLabels(MailTool):
    """List the Gmail labels of the account: your own labels, and Gmail's system folders."""

    def run(self, include_counts: bool = False) -> Labels | Failure:
        """List the labels (Gmail only; other servers have folders: ListFolders).

        Args:
            include_counts: Also give each label's total and unread message counts.
        """

        def action(settings: Settings) -> dict[str, Any]:
            self.say("start", "Listing labels")
            with imap_session(settings) as mailbox:
                _labels.require(mailbox)
                rows = [row for row in mailbox.folders() if row["selectable"]]
                if include_counts:
                    for row in rows:
                        status = mailbox.client.folder_status(row["name"],
                                                              ["MESSAGES", "UNSEEN"])
                        row["messages"] = int(status.get(b"MESSAGES", 0))
                        row["unread"] = int(status.get(b"UNSEEN", 0))
            labels, system = [], []
            for row in rows:
                entry = {"name": row["name"]}
                for key in ("messages", "unread"):
                    if key in row:
                        entry[key] = row[key]
                if _labels.is_system_folder(str(row["name"])):
                    entry["special_use"] = row["special_use"] or (
                        "inbox" if str(row["name"]).upper() == "INBOX" else None)
                    system.append(entry)
                else:
                    labels.append(entry)
            self.say("result", f"{len(labels)} labels")
            return {"success": True, "count": len(labels), "labels": labels,
                    "system": system}

        return self.execute(action, include_counts=include_counts)


def main(argv: list[str] | None = None) -> int:
    """Run ListLabels from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ListLabels, argv)


if __name__ == "__main__":
    main()
