"""MarkEmails: mark messages read, unread, flagged or unflagged."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool

from ._base import MailTool
from ._changes import run_change
from ._imap import FLAGGED, SEEN, Mailbox
from ._params import Before, Folder, Ids, Query, Sender, Since, Subject, UnreadOnly
from ._results import Changed

Mark = Literal["read", "unread", "flagged", "unflagged"]


class Marked(Changed):
    mark: Annotated[Mark, "What the messages were marked."]

_ACTIONS = {
    "read": ("add", SEEN),
    "unread": ("remove", SEEN),
    "flagged": ("add", FLAGGED),
    "unflagged": ("remove", FLAGGED),
}


@tool(permissions="w")
class MarkEmails(MailTool):
    """Mark emails as read, unread, flagged (starred) or unflagged, chosen by ids or a search."""

    def run(self, mark: Mark,
            folder: Folder = "INBOX", ids: Ids = None,
            query: Query = None, sender: Sender = None, subject: Subject = None,
            since: Since = None, before: Before = None, unread_only: UnreadOnly = False,
            dry_run: bool = False) -> Marked | Failure:
        """Set or clear the read or flagged state of the chosen messages.

        Give ids, or at least one search criterion: a call that would choose every
        message of the folder is refused.

        Args:
            mark: "read", "unread", "flagged" (starred on Gmail) or "unflagged".
            dry_run: Change nothing; list the messages that would be marked.
        """

        def apply(mailbox: Mailbox, uids: list[int]) -> dict[str, Any]:
            how, flag = _ACTIONS[mark]
            if how == "add":
                mailbox.client.add_flags(uids, [flag], silent=True)
            else:
                mailbox.client.remove_flags(uids, [flag], silent=True)
            return {}

        return run_change(
            self, {"folder": folder, "mark": mark, "dry_run": dry_run}, folder=folder,
            dry_run=dry_run,
            criteria=dict(ids=ids, query=query, sender=sender, subject=subject, since=since,
                          before=before, unread_only=unread_only),
            verb=f"mark as {mark}", starting=f"Marking messages in {folder} as {mark}",
            would=" would be marked", done=f" marked {mark}", apply=apply,
            check=lambda: _ACTIONS[mark], extra={"mark": mark},
        )


def main(argv: list[str] | None = None) -> int:
    """Run MarkEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(MarkEmails, argv)


if __name__ == "__main__":
    main()
