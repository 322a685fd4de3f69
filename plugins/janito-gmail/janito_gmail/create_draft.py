"""CreateDraft: write a message into the Drafts folder, where every mail program shows it."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from janito_core import Failure, tool
from janito_core.constraints import Pattern

from . import _compose, _drafts
from ._base import MailTool
from ._imap import imap_session
from ._params import MESSAGE_REFERENCE, Addresses, Attachments, Folder, OneLine
from ._results import Addressed, AttachedFiles, DraftSaved, NotRequired
from ._settings import Settings


class DraftCreated(Addressed, DraftSaved):
    success: Literal[True]
    message_id: Annotated[str, "The draft's Message-ID."]
    attachments: AttachedFiles
    in_reply_to: NotRequired[Annotated[str, "The Message-ID it answers."]]


@tool(permissions="w")
class CreateDraft(MailTool):
    """Save a new email as a draft in the Drafts folder (to, cc, bcc, subject, body, attachments), to send later."""

    reads_paths: ClassVar[tuple[str, ...]] = ("attachments",)

    def run(self, body: str = "", to: Addresses | None = None, subject: OneLine = "",
            cc: Addresses | None = None, bcc: Addresses | None = None,
            html_body: str | None = None, attachments: Attachments | None = None,
            in_reply_to: Annotated[str, Pattern(MESSAGE_REFERENCE)] | None = None,
            reply_folder: Folder = "INBOX") -> DraftCreated | Failure:
        """Save a draft; SendDraft sends it, UpdateDraft changes it. Recipients may be
        left for later.

        Args:
            body: The plain-text body.
            to: Recipient addresses, e.g. ["ann@example.com", "Bob <bob@example.com>"].
            subject: The subject.
            cc: Addresses to copy.
            bcc: Addresses to copy invisibly (kept in the draft, never shown to recipients).
            html_body: An HTML version of the body.
            attachments: Files of the workspace to attach (paths), 25 MB together.
            in_reply_to: Make the draft a reply to this message: its id as ReadEmails gave
                it (in reply_folder), or its Message-ID such as "<abc@mail.example.com>".
            reply_folder: The folder holding the message of in_reply_to when it is an id.
        """
        echo = {"to": to, "subject": subject}

        def action(settings: Settings) -> dict[str, Any]:
            to_list = _compose.addresses("to", to)
            cc_list = _compose.addresses("cc", cc)
            bcc_list = _compose.addresses("bcc", bcc)
            _compose.check_recipients(to_list, cc_list, bcc_list)
            files = _compose.workspace_attachments(self.workspace, attachments)
            self.say("start", "Saving a draft" + (f": {subject}" if subject else ""))
            with imap_session(settings) as mailbox:
                thread = None
                if in_reply_to:
                    thread = _compose.thread_of(in_reply_to)
                    if thread is None:
                        value = in_reply_to.strip()
                        thread = _compose.fetch_original(mailbox, reply_folder, int(value),
                                                         text=False,
                                                         field="reply_folder").thread()
                final_subject = subject or (_compose.prefixed("Re:", thread.subject)
                                            if thread and thread.subject else subject)
                msg = _compose.build(sender=settings.from_address, to=to_list, cc=cc_list,
                                     bcc=bcc_list, subject=final_subject, body=body,
                                     html_body=html_body, attachments=files, thread=thread)
                saved = _drafts.save(mailbox, msg)
            self.say("result", f"Saved draft {saved['draft_id']} in {saved['drafts_folder']}")
            result: dict[str, Any] = {
                "success": True, **saved, "message_id": msg["Message-ID"], "to": to_list,
                "cc": cc_list, "bcc": bcc_list, "subject": final_subject,
                "attachments": [f.filename for f in files],
            }
            if thread is not None:
                result["in_reply_to"] = thread.in_reply_to
            return result

        return self.execute(action, **echo)


def main(argv: list[str] | None = None) -> int:
    """Run CreateDraft from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(CreateDraft, argv)


if __name__ == "__main__":
    main()
