"""MarkEmails: mark messages read, unread, flagged or unflagged."""

from __future__ import annotations

from typing import Any, Literal

from janito_core import tool

from ._base import MailTool
from ._changes import run_change
from ._imap import FLAGGED, SEEN, Mailbox

_ACTIONS = {
    "read": ("add", SEEN),
    "unread": ("remove", SEEN),
    "flagged": ("add", FLAGGED),
    "unflagged": ("remove", FLAGGED),
}


@tool(permissions="w")
class MarkEmails(MailTool):
    """Mark emails as read, unread, flagged (starred) or unflagged, chosen by ids or a search."""

    def run(self, mark: Literal["read", "unread", "flagged", "unflagged"],
            folder: str = "INBOX", ids: list[int] | None = None, query: str | None = None,
            sender: str | None = None, subject: str | None = None, since: str | None = None,
            before: str | None = None, unread_only: bool = False,
            dry_run: bool = False) -> dict[str, Any]:
        """Set or clear the read or flagged state of the chosen messages.

        Give ids, or at least one search criterion: a call that would choose every
        message of the folder is refused.

        Args:
            mark: "read", "unread", "flagged" (starred on Gmail) or "unflagged".
            folder: The folder holding the messages.
            ids: The ids of the messages, as ReadEmails gave them.
            query: Search text. On Gmail, Gmail search syntax; elsewhere words in the message.
            sender: Only messages whose From contains this text.
            subject: Only messages whose Subject contains this text.
            since: Only messages received on or after this day (YYYY-MM-DD).
            before: Only messages received before this day (YYYY-MM-DD).
            unread_only: Only messages that are unread now.
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
