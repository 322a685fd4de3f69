"""CountEmails: how many messages a folder holds, or match a search."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool
from janito_core.results import counted

from ._base import MailTool
from ._imap import Selection, imap_session
from ._params import Before, Folder, Query, Sender, Since, Subject
from ._results import NotRequired, Selected
from ._settings import Settings


class Counted(Selected):
    success: Literal[True]
    folder: str
    count: Annotated[int, "The messages counted."]
    total: NotRequired[Annotated[int, "Every message of the folder (without a search)."]]
    unread: NotRequired[Annotated[int, "Its unread messages (without a search)."]]


@tool(permissions="r")
class CountEmails(MailTool):
    """Count the messages in a mail folder, all, unread, or matching a search."""

    def run(self, folder: Folder = "INBOX", unread_only: bool = False, query: Query = None,
            sender: Sender = None, subject: Subject = None, since: Since = None,
            before: Before = None) -> Counted | Failure:
        """Count messages without reading them.

        Args:
            folder: The folder to count in, e.g. "INBOX" or "[Gmail]/Sent Mail".
            unread_only: Count only unread messages.
            query: Search text. On Gmail, Gmail search syntax ("from:ann has:attachment
                older_than:7d"); on other servers, words to find in the message.
            sender: Only messages whose From contains this text.
            subject: Only messages whose Subject contains this text.
            since: Only messages received on or after this day (YYYY-MM-DD).
            before: Only messages received before this day (YYYY-MM-DD).
        """
        echo = {"folder": folder}

        def action(settings: Settings) -> dict[str, Any]:
            selection = Selection.build(query=query, sender=sender, subject=subject,
                                        since=since, before=before, unread_only=unread_only)
            self.say("start", f"Counting messages in {folder}")
            with imap_session(settings) as mailbox:
                narrowed = any((selection.query, selection.sender, selection.subject,
                                selection.since, selection.before))
                if not narrowed:  # STATUS answers without opening the folder
                    mailbox.require_folder(folder)
                    status = mailbox.client.folder_status(folder, ["MESSAGES", "UNSEEN"])
                    total = int(status.get(b"MESSAGES", 0))
                    unread = int(status.get(b"UNSEEN", 0))
                    count = unread if selection.unread_only else total
                    result = {"success": True, "folder": folder, "count": count,
                              "total": total, "unread": unread, **selection.describe()}
                else:
                    mailbox.select(folder, readonly=True)
                    count = len(mailbox.search(selection))
                    result = {"success": True, "folder": folder, "count": count,
                              **selection.describe()}
            self.say("result", counted(count, "message"))
            return result

        return self.execute(action, **echo)


def main(argv: list[str] | None = None) -> int:
    """Run CountEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(CountEmails, argv)


if __name__ == "__main__":
    main()
