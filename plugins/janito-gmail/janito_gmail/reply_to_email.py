"""ReplyToEmail: answer a message (or everyone on it), threaded and quoted, or draft the answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from janito_core import Failure, tool

from . import _compose, _drafts, _smtp
from ._base import MailTool
from ._imap import imap_session
from ._params import Addresses, Attachments, Folder, MessageId
from ._results import Addressed, AttachedFiles, LeftOut, NotRequired, SentOrSaved
from ._settings import Settings


class Reply(Addressed, SentOrSaved):
    success: Literal[True]
    id: Annotated[int, "The message answered."]
    folder: str
    reply_all: bool
    message_id: Annotated[str, "The reply's Message-ID."]
    in_reply_to: Annotated[str, "The Message-ID it answers."]
    references: Annotated[list[str], "The conversation's Message-IDs."]
    attachments: NotRequired[AttachedFiles]
    left_out: NotRequired[LeftOut]


@tool(permissions="w")
class ReplyToEmail(MailTool):
    """Reply to an email, or reply to all, threaded under it; recipients are worked out from the message."""

    def run(self, id: MessageId, body: str, folder: Folder = "INBOX", reply_all: bool = False,
            cc: Addresses | None = None, bcc: Addresses | None = None,
            html_body: str | None = None, attachments: Attachments | None = None,
            quote: bool = True, draft: bool = False) -> Reply | Failure:
        """Answer a message: to its author (Reply-To, else From), or with reply_all to
        everyone it was sent to as well, leaving out the account's own address (and any
        address no header can carry, listed in left_out).

        The subject is "Re: " and the original's; In-Reply-To and References thread the
        answer under the message in every mail program.

        Args:
            id: The message to answer, its id as ReadEmails gave it.
            body: The text of the answer (the quoted original follows it).
            folder: The folder holding the message.
            reply_all: Also send to everyone else in its To and Cc.
            cc: More addresses to copy.
            bcc: Addresses to copy invisibly.
            html_body: An HTML version of the answer, sent alongside the text.
            attachments: Files of the workspace to attach (paths), at most 25 files and
                25 MB together.
            quote: Quote the original's text below the answer, as mail programs do.
            draft: Save the answer in the Drafts folder instead of sending it.
        """
        echo = {"id": id, "folder": folder, "reply_all": reply_all, "draft": draft}

        def action(settings: Settings) -> dict[str, Any]:
            extra_cc = _compose.addresses("cc", cc)
            bcc_list = _compose.addresses("bcc", bcc)
            files = _compose.workspace_attachments(self.workspace, attachments)
            self.say("start", f"{'Drafting' if draft else 'Writing'} a reply to message {id} "
                              f"in {folder}")
            with imap_session(settings) as mailbox:
                original = _compose.fetch_original(mailbox, folder, id, text=quote)
                to_list, cc_list, left_out = _compose.reply_recipients(
                    original, _compose.own_addresses(settings), reply_all=reply_all)
                cc_list += [a for a in extra_cc if a not in cc_list]
                _compose.check_recipients(to_list, cc_list, bcc_list)
                text, html = _compose.reply_bodies(body, html_body, original, quote=quote)
                msg = _compose.build(
                    sender=settings.from_address, to=to_list, cc=cc_list,
                    subject=_compose.prefixed("Re:", original.subject), body=text,
                    html_body=html, attachments=files, thread=original.thread(),
                    bcc=bcc_list if draft else None)
                if draft:
                    saved = _drafts.save(mailbox, msg)
            result: dict[str, Any] = {
                "success": True, "id": id, "folder": folder, "reply_all": reply_all,
                "message_id": msg["Message-ID"], "to": to_list, "cc": cc_list, "bcc": bcc_list,
                "subject": msg["Subject"], "in_reply_to": original.message_id,
                "references": original.thread().references,
            }
            if files:
                result["attachments"] = [f.filename for f in files]
            if left_out:
                result["left_out"] = left_out
                self.say("warning", f"Left out {len(left_out)} addresses of the message that a "
                                    "header cannot name")
            if draft:
                result.update(saved)
                self.say("result", f"Saved the reply as draft {saved['draft_id']}")
                return result
            sender = _compose.sender_address(settings)
            recipients = _compose.bare(to_list + cc_list + bcc_list)
            refused = _smtp.send(settings, msg, sender, recipients)
            result["sent"] = True
            result["recipients"] = len(recipients) - len(refused)
            if refused:
                result["refused"] = refused
                self.say("warning", f"The server refused {', '.join(refused)}")
            self.say("result", f"Replied to {', '.join(_compose.bare(to_list))}")
            return result

        return self.execute(action, **echo)


def main(argv: list[str] | None = None) -> int:
    """Run ReplyToEmail from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReplyToEmail, argv)


if __name__ == "__main__":
    main()
