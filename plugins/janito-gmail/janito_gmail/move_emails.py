"""MoveEmails: move messages to another folder (on Gmail, another label)."""

from __future__ import annotations

from typing import Annotated, Any

from janito_core import Failure, tool
from janito_core.constraints import Pattern

from ._base import MailTool
from ._changes import run_change
from ._errors import INVALID_ARGUMENTS, MailError
from ._imap import Mailbox
from ._params import NAME, Before, Folder, Ids, Query, Sender, Since, Subject, UnreadOnly
from ._results import Changed, Method, NotRequired


class Moved(Changed):
    destination: Annotated[str, "The folder they were moved to."]
    method: NotRequired[Method]


def move(mailbox: Mailbox, uids: list[int], destination: str) -> dict[str, Any]:
    """Move ``uids`` from the selected folder: MOVE where supported, else COPY + expunge."""
    if mailbox.has("MOVE"):
        mailbox.client.move(uids, destination)
        return {"method": "MOVE"}
    mailbox.client.copy(uids, destination)
    mailbox.expunge_uids(uids)
    return {"method": "COPY and EXPUNGE"}


@tool(permissions="w")
class MoveEmails(MailTool):
    """Move emails, chosen by ids or a search, from one folder to another."""

    def run(self, destination: Annotated[str, Pattern(NAME)], folder: Folder = "INBOX",
            ids: Ids = None,
            query: Query = None, sender: Sender = None, subject: Subject = None,
            since: Since = None, before: Before = None, unread_only: UnreadOnly = False,
            dry_run: bool = False) -> Moved | Failure:
        """Move the chosen messages to the destination folder, which must exist.

        Give ids, or at least one search criterion: a call that would choose every
        message of the folder is refused.

        Args:
            destination: The folder to move to, e.g. "Archive" or a Gmail label name.
            dry_run: Move nothing; list the messages that would be moved.
        """

        def check() -> None:
            if destination == folder:
                raise MailError(INVALID_ARGUMENTS, "destination is the folder the messages "
                                                   "are already in")

        def prepare(mailbox: Mailbox) -> dict[str, Any]:
            mailbox.require_folder(destination, field="destination")
            return {"destination": destination}

        return run_change(
            self, {"folder": folder, "destination": destination, "dry_run": dry_run},
            folder=folder, dry_run=dry_run,
            criteria=dict(ids=ids, query=query, sender=sender, subject=subject, since=since,
                          before=before, unread_only=unread_only),
            verb="move", starting=f"Moving messages from {folder} to {destination}",
            would=" would be moved", done=f" moved to {destination}", check=check,
            prepare=prepare, apply=lambda mailbox, uids: move(mailbox, uids, destination),
        )


def main(argv: list[str] | None = None) -> int:
    """Run MoveEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(MoveEmails, argv)


if __name__ == "__main__":
    main()
