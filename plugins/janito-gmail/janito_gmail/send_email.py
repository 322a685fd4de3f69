"""SendEmail: send a message over SMTP, optionally as a threaded reply."""

from __future__ import annotations

import email.utils
import re
from email.message import EmailMessage
from typing import Any

from janito_core import tool

from . import _mime, _smtp
from ._base import MailTool
from ._errors import INVALID_ARGUMENTS, NOT_FOUND, MailError
from ._imap import imap_session, section
from ._settings import Settings

MAX_RECIPIENTS = 100
_MESSAGE_ID = re.compile(r"^<[^<>\s]+@[^<>\s]+>$")


def _addresses(field: str, values: list[str] | None) -> list[str]:
    """Validated "Name <addr>" or "addr" strings; MailError names the bad field."""
    out: list[str] = []
    for value in values or []:
        if not isinstance(value, str) or re.search(r"[\r\n\x00]", value):
            raise MailError(INVALID_ARGUMENTS, f"{field} holds a value that is not one line "
                                               "of text")
        pairs = email.utils.getaddresses([value])
        if not pairs or any(not addr or "@" not in addr or " " in addr for _n, addr in pairs):
            raise MailError(INVALID_ARGUMENTS, f"{field} holds {value[:80]!r}, which is not "
                                               "an email address")
        out.extend(email.utils.formataddr(pair) for pair in pairs)
    return out


def _bare(addresses: list[str]) -> list[str]:
    return [addr for _name, addr in email.utils.getaddresses(addresses)]


@tool(permissions="w")
class SendEmail(MailTool):
    """Send an email (to, cc, bcc, subject, body), optionally as a reply threaded under a message."""

    def run(self, to: list[str], body: str, subject: str | None = None,
            cc: list[str] | None = None, bcc: list[str] | None = None,
            html_body: str | None = None, in_reply_to: str | None = None,
            reply_folder: str = "INBOX") -> dict[str, Any]:
        """Send a message through the account's SMTP server.

        Args:
            to: Recipient addresses, e.g. ["ann@example.com", "Bob <bob@example.com>"].
            body: The plain-text body.
            subject: The subject; for a reply, defaults to "Re: " and the original subject.
            cc: Addresses to copy.
            bcc: Addresses to copy invisibly (not shown to the other recipients).
            html_body: An HTML version of the body, sent alongside the plain text.
            in_reply_to: Reply to this message: its id as ReadEmails gave it (in
                reply_folder), or its Message-ID header such as "<abc@mail.example.com>".
                Sets In-Reply-To and References so mail programs thread the reply.
            reply_folder: The folder holding the message of in_reply_to when it is an id.
        """
        echo = {"to": to, "subject": subject}

        def action(settings: Settings) -> dict[str, Any]:
            to_list = _addresses("to", to)
            cc_list = _addresses("cc", cc)
            bcc_list = _addresses("bcc", bcc)
            if not to_list:
                raise MailError(INVALID_ARGUMENTS, "to must hold at least one address")
            recipients = _bare(to_list + cc_list + bcc_list)
            if len(recipients) > MAX_RECIPIENTS:
                raise MailError(INVALID_ARGUMENTS, f"at most {MAX_RECIPIENTS} recipients "
                                                   "per message")
            if subject is not None and re.search(r"[\r\n\x00]", subject):
                raise MailError(INVALID_ARGUMENTS, "subject must be one line of text")
            sender = settings.from_address
            thread = self._thread(settings, in_reply_to, reply_folder) if in_reply_to else {}
            final_subject = subject
            if final_subject is None:
                original = thread.get("subject", "")
                final_subject = "" if not in_reply_to else (
                    original if original.lower().startswith("re:") else
                    f"Re: {original}".strip()
                )
            msg = EmailMessage()
            msg["From"] = sender
            msg["To"] = ", ".join(to_list)
            if cc_list:
                msg["Cc"] = ", ".join(cc_list)
            msg["Subject"] = final_subject
            msg["Date"] = email.utils.formatdate(localtime=True)
            domain = sender.rsplit("@", 1)[-1].strip("> ") or None
            message_id = email.utils.make_msgid(domain=domain)
            msg["Message-ID"] = message_id
            if thread:
                msg["In-Reply-To"] = thread["message_id"]
                msg["References"] = " ".join(thread["references"])
            msg.set_content(body)
            if html_body:
                msg.add_alternative(html_body, subtype="html")
            self.say("start", f"Sending email to {', '.join(_bare(to_list))}")
            refused = _smtp.send(settings, msg, (_bare([sender]) or [sender])[0], recipients)
            result: dict[str, Any] = {
                "success": True, "message_id": message_id, "from": sender, "to": to_list,
                "cc": cc_list, "bcc": bcc_list, "subject": final_subject,
                "recipients": len(recipients) - len(refused),
            }
            if refused:
                result["refused"] = refused
                self.say("warning", f"The server refused {', '.join(refused)}")
            if thread:
                result["in_reply_to"] = thread["message_id"]
                result["references"] = thread["references"]
            self.say("result", f"Sent to {len(recipients)} recipients")
            return result

        return self.execute(action, **echo)

    def _thread(self, settings: Settings, in_reply_to: str, folder: str) -> dict[str, Any]:
        """Message-ID, References and Subject of the message being answered."""
        value = in_reply_to.strip()
        if _MESSAGE_ID.match(value):
            return {"message_id": value, "references": [value], "subject": ""}
        if not value.isdigit() or int(value) < 1:
            raise MailError(INVALID_ARGUMENTS, "in_reply_to must be a message id from "
                                               "ReadEmails or a Message-ID like <abc@host>")
        uid = int(value)
        fields = "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID REFERENCES IN-REPLY-TO SUBJECT)]"
        with imap_session(settings) as mailbox:
            mailbox.select(folder, readonly=True)
            data = mailbox.client.fetch([uid], [fields])
        item = data.get(uid)
        if item is None:
            raise MailError(NOT_FOUND, f"no message with id {uid} is in {folder}; the reply "
                                       "was not sent", in_reply_to=in_reply_to)
        headers = _mime.parse_headers(section(item, b"BODY[HEADER") or b"")
        original_id = _mime.header(headers, "Message-ID")
        if not original_id:
            raise MailError(NOT_FOUND, f"message {uid} has no Message-ID header to reply to; "
                                       "the reply was not sent")
        references = re.findall(r"<[^<>\s]+>", _mime.header(headers, "References"))
        if not references:
            references = re.findall(r"<[^<>\s]+>", _mime.header(headers, "In-Reply-To"))
        references = [*[r for r in references if r != original_id][-20:], original_id]
        return {"message_id": original_id, "references": references,
                "subject": _mime.header(headers, "Subject")}


def main(argv: list[str] | None = None) -> int:
    """Run SendEmail from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(SendEmail, argv)


if __name__ == "__main__":
    main()
