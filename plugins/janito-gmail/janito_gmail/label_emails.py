"""LabelEmails: add and remove Gmail labels on messages, without moving them."""

from __future__ import annotations

from typing import Annotated, Any

from janito_core import Failure, tool
from janito_core.constraints import AtLeastOneOf, MinLen

from . import _labels
from ._base import MailTool
from ._changes import run_change
from ._errors import INVALID_ARGUMENTS, MailError
from ._imap import Mailbox
from ._params import Before, Folder, Ids, Labels, Query, Sender, Since, Subject, UnreadOnly
from ._results import Changed

#: Labels to add or remove: one or more, and at least one of the two lists is given.
SomeLabels = Annotated[Labels | None, MinLen(1), AtLeastOneOf("labels")]


class Labelled(Changed):
    added: Annotated[list[str], "The labels put on the messages."]
    removed: Annotated[list[str], "The labels taken off."]


@tool(permissions="w")
class LabelEmails(MailTool):
    """Add or remove Gmail labels on emails chosen by ids or a search; they stay where they are."""

    def run(self, add: SomeLabels = None, remove: SomeLabels = None,
            folder: Folder = "INBOX", ids: Ids = None,
            query: Query = None, sender: Sender = None, subject: Subject = None,
            since: Since = None, before: Before = None, unread_only: UnreadOnly = False,
            dry_run: bool = False) -> Labelled | Failure:
        """Change the labels of the chosen messages (Gmail only; a label that does not
        exist yet is created). Inbox, Starred and Important name Gmail's own labels:
        removing Inbox archives.

        Give ids, or at least one search criterion: a call that would choose every
        message of the folder is refused.

        Args:
            add: Labels to put on the messages, e.g. ["Projects/2024"].
            remove: Labels to take off.
            dry_run: Change nothing; list the messages that would be labelled.
        """
        labels: dict[str, list[str]] = {}

        def check() -> None:
            labels["add"] = _labels.clean("add", add)
            labels["remove"] = _labels.clean("remove", remove)
            both = set(labels["add"]) & set(labels["remove"])
            if both:
                raise MailError(INVALID_ARGUMENTS, f"{sorted(both)[0]!r} is both to add and to "
                                                   "remove")

        def prepare(mailbox: Mailbox) -> dict[str, Any]:
            _labels.require(mailbox)
            return {"added": labels["add"], "removed": labels["remove"]}

        def apply(mailbox: Mailbox, uids: list[int]) -> dict[str, Any]:
            if labels["add"]:
                mailbox.client.add_gmail_labels(uids, labels["add"], silent=True)
            if labels["remove"]:
                mailbox.client.remove_gmail_labels(uids, labels["remove"], silent=True)
            return {}

        return run_change(
            self, {"folder": folder, "add": add, "remove": remove, "dry_run": dry_run},
            folder=folder, dry_run=dry_run,
            criteria=dict(ids=ids, query=query, sender=sender, subject=subject, since=since,
                          before=before, unread_only=unread_only),
            verb="label", starting=f"Labelling messages in {folder}",
            would=" would be labelled", done=" labelled", check=check, prepare=prepare,
            apply=apply,
        )


def main(argv: list[str] | None = None) -> int:
    """Run LabelEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(LabelEmails, argv)


if __name__ == "__main__":
    main()
