"""DeleteEmails: remove messages for good (flag deleted and expunge exactly those)."""

from __future__ import annotations

from typing import Any

from janito_core import Failure, tool

from ._base import MailTool
from ._changes import run_change
from ._imap import Mailbox
from ._params import Before, Folder, Ids, Query, Sender, Since, Subject, UnreadOnly
from ._results import Changed

GMAIL_NOTE = (
    "On Gmail, expunging from a label folder only removes that label (the message stays "
    "in All Mail); to delete for good, use TrashEmails and then DeleteEmails with folder "
    "[Gmail]/Trash."
)


@tool(permissions="w")
class DeleteEmails(MailTool):
    """Permanently delete emails chosen by ids or a search (cannot be undone; prefer TrashEmails)."""

    def run(self, folder: Folder = "INBOX", ids: Ids = None,
            query: Query = None, sender: Sender = None, subject: Subject = None,
            since: Since = None, before: Before = None, unread_only: UnreadOnly = False,
            dry_run: bool = False) -> Changed | Failure:
        """Delete the chosen messages permanently; only they are expunged.

        Give ids, or at least one search criterion: a call that would choose every
        message of the folder is refused. Try dry_run first.

        Args:
            dry_run: Delete nothing; list the messages that would be deleted.
        """

        def prepare(mailbox: Mailbox) -> dict[str, Any]:
            return {"note": GMAIL_NOTE} if mailbox.gmail else {}

        def apply(mailbox: Mailbox, uids: list[int]) -> dict[str, Any]:
            mailbox.expunge_uids(uids)
            return {}

        return run_change(
            self, {"folder": folder, "dry_run": dry_run}, folder=folder, dry_run=dry_run,
            criteria=dict(ids=ids, query=query, sender=sender, subject=subject, since=since,
                          before=before, unread_only=unread_only),
            verb="delete", starting=f"Deleting messages in {folder}",
            would=" would be deleted", done=" deleted", apply=apply, prepare=prepare,
        )


def main(argv: list[str] | None = None) -> int:
    """Run DeleteEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(DeleteEmails, argv)


if __name__ == "__main__":
    main()
