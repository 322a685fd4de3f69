"""ForwardEmail: send a message on to others, with or without its attachments."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool
from janito_core.constraints import MinLen

from . import _compose, _drafts, _smtp
from ._base import MailTool
from ._imap import imap_session
from ._params import Addresses, Attachments, Folder, MessageId
from ._results import Addressed, AttachedFiles, NotRequired, Renamed, SentOrSaved
from ._settings import Settings


class Forwarded(Addressed, SentOrSaved):
    success: Literal[True]
    id: Annotated[int, "The message forwarded."]
    folder: str
    message_id: Annotated[str, "The forward's Message-ID."]
    attachments: AttachedFiles
    renamed: NotRequired[Annotated[list[Renamed], "Attachments sent under a safe name."]]


@tool(permissions="w")
class ForwardEmail(MailTool):
    """Forward an email to other people, with its attachments or without, and an optional note."""

    def run(self, id: MessageId, to: Annotated[Addresses, MinLen(1)], body: str = "",
            folder: Folder = "INBOX", cc: Addresses | None = None, bcc: Addresses | None = None,
            include_attachments: bool = True, attachments: Attachments | None = None,
            draft: bool = False) -> Forwarded | Failure:
        """Forward a message: the note, then the original's headers and text, as mail
        programs do; the subject is "Fwd: " and the original's. An attachment whose name
        holds a line break goes under a safe name (the result's renamed lists it).

        Args:
            id: The message to forward, its id as ReadEmails gave it.
            to: The addresses to forward to.
            body: A note written above the forwarded message.
            folder: The folder holding the message.
            cc: Addresses to copy.
            bcc: Addresses to copy invisibly.
            include_attachments: Attach the original's attachments again (together at most
                25 MB).
            attachments: More files of the workspace to attach (paths).
            draft: Save the forward in the Drafts folder instead of sending it.
        """
        echo = {"id": id, "folder": folder, "to": to, "draft": draft}

        def action(settings: Settings) -> dict[str, Any]:
            to_list = _compose.addresses("to", to)
            cc_list = _compose.addresses("cc", cc)
            bcc_list = _compose.addresses("bcc", bcc)
            recipients = _compose.check_recipients(to_list, cc_list, bcc_list)
            files = _compose.workspace_attachments(self.workspace, attachments)
            budget = _compose.MAX_ATTACHMENT_BYTES - sum(len(f.data) for f in files)
            self.say("start", f"Forwarding message {id} from {folder}")
            with imap_session(settings) as mailbox:
                original = _compose.fetch_original(mailbox, folder, id, html=True,
                                                   attachments=include_attachments,
                                                   budget=budget)
                note = body.rstrip() + "\n\n" if body.strip() else ""
                msg = _compose.build(
                    sender=settings.from_address, to=to_list, cc=cc_list,
                    subject=_compose.prefixed("Fwd:", original.subject),
                    body=note + _compose.forwarded(original),
                    html_body=_compose.forwarded_html(original, _compose.text_as_html(body)),
                    attachments=original.attachments + files, thread=original.thread(),
                    bcc=bcc_list if draft else None)
                if draft:
                    saved = _drafts.save(mailbox, msg)
            carried = [a.filename for a in original.attachments + files]
            result: dict[str, Any] = {
                "success": True, "id": id, "folder": folder, "message_id": msg["Message-ID"],
                "to": to_list, "cc": cc_list, "bcc": bcc_list, "subject": msg["Subject"],
                "attachments": carried,
            }
            renamed = _compose.renamed(original.attachments)
            if renamed:
                result["renamed"] = renamed
                self.say("warning", f"Renamed {len(renamed)} attachments whose names held line "
                                    "breaks")
            if draft:
                result.update(saved)
                self.say("result", f"Saved the forward as draft {saved['draft_id']}")
                return result
            sender = _compose.sender_address(settings)
            refused = _smtp.send(settings, msg, sender, recipients)
            result["sent"] = True
            result["recipients"] = len(recipients) - len(refused)
            if refused:
                result["refused"] = refused
                self.say("warning", f"The server refused {', '.join(refused)}")
            self.say("result", f"Forwarded to {', '.join(_compose.bare(to_list))}")
            return result

        return self.execute(action, **echo)


def main(argv: list[str] | None = None) -> int:
    """Run ForwardEmail from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ForwardEmail, argv)


if __name__ == "__main__":
    main()
