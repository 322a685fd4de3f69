"""TrashEmails: move messages to the Trash folder, where they can still be recovered."""

from __future__ import annotations

from typing import Annotated, Any

from janito_core import Failure, tool

from ._base import MailTool
from ._changes import run_change
from ._errors import INVALID_ARGUMENTS, NOT_FOUND, MailError
from ._imap import Mailbox
from ._params import Before, Folder, Ids, Query, Sender, Since, Subject, UnreadOnly
from ._results import Changed, Method, NotRequired
from .move_emails import move


class Trashed(Changed):
    trash_folder: Annotated[str, "The Trash folder they were moved to."]
    method: NotRequired[Method]


@tool(permissions="w")
class TrashEmails(MailTool):
    """Move emails, chosen by ids or a search, to the Trash folder (recoverable)."""

    def run(self, folder: Folder = "INBOX", ids: Ids = None,
            query: Query = None, sender: Sender = None, subject: Subject = None,
            since: Since = None, before: Before = None, unread_only: UnreadOnly = False,
            dry_run: bool = False) -> Trashed | Failure:
        """Move the chosen messages to Trash (on Gmail, [Gmail]/Trash).

        Give ids, or at least one search criterion: a call that would choose every
        message of the folder is refused. DeleteEmails removes messages for good.

        Args:
            dry_run: Move nothing; list the messages that would go to Trash.
        """

        trash: dict[str, str] = {}

        def prepare(mailbox: Mailbox) -> dict[str, Any]:
            found = mailbox.trash_folder()
            if found is None:
                raise MailError(NOT_FOUND, "this mailbox has no Trash folder; set the "
                                           "setting trash_folder, or use DeleteEmails")
            if found == folder:
                raise MailError(INVALID_ARGUMENTS, f"the messages are already in {found}; "
                                                   "DeleteEmails removes them for good")
            mailbox.require_folder(found)
            trash["name"] = found
            return {"trash_folder": found}

        return run_change(
            self, {"folder": folder, "dry_run": dry_run}, folder=folder, dry_run=dry_run,
            criteria=dict(ids=ids, query=query, sender=sender, subject=subject, since=since,
                          before=before, unread_only=unread_only),
            verb="trash", starting=f"Moving messages from {folder} to Trash",
            would=" would be trashed", done=" moved to Trash", prepare=prepare,
            apply=lambda mailbox, uids: move(mailbox, uids, trash["name"]),
        )


def main(argv: list[str] | None = None) -> int:
    """Run TrashEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(TrashEmails, argv)


if __name__ == "__main__":
    main()
