"""SendDraft: send a draft as it stands, then remove it from the Drafts folder."""

from __future__ import annotations

import email.utils
from typing import Annotated, Any, Literal

from janito_core import Failure, tool

from . import _compose, _drafts, _smtp
from ._base import MailTool
from ._errors import INVALID_ARGUMENTS, MailError
from ._imap import imap_session
from ._params import MessageId
from ._results import Addressed, LeftOut, NotRequired, Refused
from ._settings import Settings


class DraftSent(Addressed):
    success: Literal[True]
    id: Annotated[int, "The draft sent, now removed."]
    drafts_folder: str
    sent: bool
    message_id: Annotated[str, "The Message-ID it was sent with."]
    recipients: Annotated[int, "The recipients the server took."]
    left_out: NotRequired[LeftOut]
    refused: NotRequired[Refused]


@tool(permissions="w")
class SendDraft(MailTool):
    """Send a draft from the Drafts folder to its recipients; the draft is removed once sent."""

    def run(self, id: MessageId) -> DraftSent | Failure:
        """Send the draft as it is (UpdateDraft changes it first).

        Args:
            id: The draft's id, as ListDrafts or CreateDraft gave it.
        """

        def action(settings: Settings) -> dict[str, Any]:
            self.say("start", f"Sending draft {id}")
            with imap_session(settings) as mailbox:
                name, msg = _drafts.load(mailbox, id)
                to_list, left_to = _drafts.addresses_of(msg, "To")
                cc_list, left_cc = _drafts.addresses_of(msg, "Cc")
                bcc_list, left_bcc = _drafts.addresses_of(msg, "Bcc")
                left_out = left_to + left_cc + left_bcc
                if not (to_list or cc_list or bcc_list):
                    raise MailError(INVALID_ARGUMENTS, f"draft {id} has no recipients; give "
                                                       "it some with UpdateDraft first")
                recipients = _compose.check_recipients(to_list, cc_list, bcc_list)
                del msg["Bcc"]  # the copies stay invisible
                del msg["Date"]
                msg["Date"] = email.utils.formatdate(localtime=True)
                if not msg.get("Message-ID"):
                    msg["Message-ID"] = email.utils.make_msgid()
                sender = _compose.sender_address(settings)
                refused = _smtp.send(settings, msg, sender, recipients)
                _drafts.remove(mailbox, name, id)  # only once it is sent
            result: dict[str, Any] = {
                "success": True, "id": id, "drafts_folder": name, "sent": True,
                "message_id": str(msg["Message-ID"]), "to": to_list, "cc": cc_list,
                "bcc": bcc_list, "subject": str(msg.get("Subject") or ""),
                "recipients": len(recipients) - len(refused),
            }
            if left_out:
                result["left_out"] = left_out
                self.say("warning", f"Left out {len(left_out)} addresses of the draft that a "
                                    "header cannot name")
            if refused:
                result["refused"] = refused
                self.say("warning", f"The server refused {', '.join(refused)}")
            self.say("result", f"Sent draft {id} to {len(recipients)} recipients")
            return result

        return self.execute(action, id=id)


def main(argv: list[str] | None = None) -> int:
    """Run SendDraft from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(SendDraft, argv)


if __name__ == "__main__":
    main()
