"""SendEmail: send a message over SMTP, with attachments, optionally as a threaded reply."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from janito_core import Failure, tool
from janito_core.constraints import MinLen, Pattern

from . import _compose, _smtp
from ._base import MailTool
from ._imap import imap_session
from ._params import MESSAGE_REFERENCE, Addresses, Attachments, Folder, OneLine
from ._results import NotRequired, Recipients, Refused, TypedDict
from ._settings import Settings


class Attached(TypedDict):
    filename: str
    size: Annotated[int, "Bytes."]


Sent = TypedDict("Sent", {
    "success": Literal[True],
    "message_id": Annotated[str, "The Message-ID it was sent with."],
    "from": str,
    "to": Recipients,
    "cc": list[str],
    "bcc": list[str],
    "subject": str,
    "recipients": Annotated[int, "The recipients the server took."],
    "attachments": NotRequired[list[Attached]],
    "refused": NotRequired[Refused],
    "in_reply_to": NotRequired[Annotated[str, "The Message-ID it answers."]],
    "references": NotRequired[Annotated[list[str], "The conversation's Message-IDs."]],
})


@tool(permissions="w")
class SendEmail(MailTool):
    """Send an email (to, cc, bcc, subject, body, attachments), optionally as a reply threaded under a message."""

    reads_paths: ClassVar[tuple[str, ...]] = ("attachments",)

    def run(self, to: Annotated[Addresses, MinLen(1)], body: str, subject: OneLine | None = None,
            cc: Addresses | None = None, bcc: Addresses | None = None,
            html_body: str | None = None, attachments: Attachments | None = None,
            in_reply_to: Annotated[str, Pattern(MESSAGE_REFERENCE)] | None = None,
            reply_folder: Folder = "INBOX") -> Sent | Failure:
        """Send a message through the account's SMTP server.

        Args:
            to: Recipient addresses, e.g. ["ann@example.com", "Bob <bob@example.com>"].
            body: The plain-text body.
            subject: The subject; for a reply, defaults to "Re: " and the original subject.
            cc: Addresses to copy.
            bcc: Addresses to copy invisibly (not shown to the other recipients).
            html_body: An HTML version of the body, sent alongside the plain text.
            attachments: Files of the workspace to attach (paths), 25 MB together.
            in_reply_to: Reply to this message: its id as ReadEmails gave it (in
                reply_folder), or its Message-ID header such as "<abc@mail.example.com>".
                Sets In-Reply-To and References so mail programs thread the reply.
                ReplyToEmail also works out the recipients and quotes the message.
            reply_folder: The folder holding the message of in_reply_to when it is an id.
        """
        echo = {"to": to, "subject": subject}

        def action(settings: Settings) -> dict[str, Any]:
            to_list = _compose.addresses("to", to)
            cc_list = _compose.addresses("cc", cc)
            bcc_list = _compose.addresses("bcc", bcc)
            recipients = _compose.check_recipients(to_list, cc_list, bcc_list)
            files = _compose.workspace_attachments(self.workspace, attachments)
            thread = self._thread(settings, in_reply_to, reply_folder) if in_reply_to else None
            final_subject = subject
            if final_subject is None:
                final_subject = _compose.prefixed("Re:", thread.subject) if thread else ""
            msg = _compose.build(sender=settings.from_address, to=to_list, cc=cc_list,
                                 subject=final_subject, body=body, html_body=html_body,
                                 attachments=files, thread=thread)
            self.say("start", f"Sending email to {', '.join(_compose.bare(to_list))}")
            sender = _compose.sender_address(settings)
            refused = _smtp.send(settings, msg, sender, recipients)
            result: dict[str, Any] = {
                "success": True, "message_id": msg["Message-ID"], "from": settings.from_address,
                "to": to_list, "cc": cc_list, "bcc": bcc_list, "subject": final_subject,
                "recipients": len(recipients) - len(refused),
            }
            if files:
                result["attachments"] = [{"filename": f.filename, "size": len(f.data)}
                                         for f in files]
            if refused:
                result["refused"] = refused
                self.say("warning", f"The server refused {', '.join(refused)}")
            if thread:
                result["in_reply_to"] = thread.in_reply_to
                result["references"] = thread.references
            self.say("result", f"Sent to {len(recipients)} recipients")
            return result

        return self.execute(action, **echo)

    @staticmethod
    def _thread(settings: Settings, in_reply_to: str, folder: str) -> _compose.Thread:
        """In-Reply-To, References and Subject of the message being answered."""
        given = _compose.thread_of(in_reply_to)
        if given is not None:
            return given
        value = in_reply_to.strip()
        with imap_session(settings) as mailbox:
            original = _compose.fetch_original(mailbox, folder, int(value), text=False,
                                                field="reply_folder")
        return original.thread()


def main(argv: list[str] | None = None) -> int:
    """Run SendEmail from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(SendEmail, argv)


if __name__ == "__main__":
    main()
