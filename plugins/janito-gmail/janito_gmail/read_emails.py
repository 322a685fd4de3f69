"""ReadEmails: the newest messages of a folder, or those matching a search, with text bodies."""

from __future__ import annotations

import email.parser
import email.policy
from typing import Any

from janito_core import tool

from . import _mime
from ._base import MailTool
from ._errors import INVALID_ARGUMENTS, MailError
from ._imap import FLAGGED, SEEN, Mailbox, Selection, imap_session, section
from ._settings import Settings

MAX_LIMIT = 500
MAX_BODY_CHARS = 100_000
# Body texts are fetched with one FETCH per distinct MIME section ("1", "1.1", ...);
# past this many distinct sections the rest share one FETCH of the raw message start.
MAX_SECTION_FETCHES = 6


def _fetch_length(part: _mime.Part, max_chars: int) -> int:
    """How many encoded bytes of a body part give ``max_chars`` characters of text."""
    if part.content_type == "text/html":
        return max_chars * 24 + 8192
    return max_chars * 6 + 1024


@tool(permissions="r")
class ReadEmails(MailTool):
    """Read emails from a folder: newest first, or by search; sender, subject, date, text body, attachments."""

    def run(self, folder: str = "INBOX", limit: int = 20, unread_only: bool = False,
            query: str | None = None, sender: str | None = None, subject: str | None = None,
            since: str | None = None, before: str | None = None,
            ids: list[int] | None = None, max_body_chars: int = 2000) -> dict[str, Any]:
        """Read messages without marking them read; the newest come first.

        Args:
            folder: The folder to read, e.g. "INBOX" or "[Gmail]/All Mail".
            limit: At most this many messages (1 to 500), the newest matching ones.
            unread_only: Only unread messages.
            query: Search text. On Gmail, Gmail search syntax ("from:ann has:attachment
                newer_than:2d"); on other servers, words to find in the message.
            sender: Only messages whose From contains this text.
            subject: Only messages whose Subject contains this text.
            since: Only messages received on or after this day (YYYY-MM-DD).
            before: Only messages received before this day (YYYY-MM-DD).
            ids: Read exactly these messages (ids as earlier results gave them).
            max_body_chars: Cut each text body to this many characters (0 for no body).
        """
        echo = {"folder": folder}

        def action(settings: Settings) -> dict[str, Any]:
            if not 1 <= limit <= MAX_LIMIT:
                raise MailError(INVALID_ARGUMENTS, f"limit must be between 1 and {MAX_LIMIT}")
            if not 0 <= max_body_chars <= MAX_BODY_CHARS:
                raise MailError(INVALID_ARGUMENTS,
                                f"max_body_chars must be between 0 and {MAX_BODY_CHARS}")
            selection = Selection.build(ids=ids, query=query, sender=sender, subject=subject,
                                        since=since, before=before, unread_only=unread_only)
            if selection.ids is not None and not selection.ids:
                raise MailError(INVALID_ARGUMENTS, "ids is empty; leave it out to read the "
                                                   "newest messages")
            self.say("start", f"Reading emails in {folder}")
            with imap_session(settings) as mailbox:
                info = mailbox.select(folder, readonly=True)
                exists = int(info.get(b"EXISTS", 0))
                missing: list[int] = []
                if selection.ids:
                    uids, missing = mailbox.resolve(selection)
                else:
                    uids = mailbox.search(selection, exists=exists, newest=limit)
                matching = len(uids)
                chosen = sorted(uids)[-limit:][::-1]
                messages = self._read(mailbox, chosen, max_body_chars)
            result: dict[str, Any] = {
                "success": True, "folder": folder, **selection.describe(),
                "count": len(messages), "matching": matching, "messages": messages,
            }
            if missing:
                result["missing_ids"] = missing
            self.say("result", f"{len(messages)} of {matching} messages")
            return result

        return self.execute(action, **echo)

    # -- fetching ----------------------------------------------------------------------

    def _read(self, mailbox: Mailbox, uids: list[int], max_chars: int) -> list[dict[str, Any]]:
        if not uids:
            return []
        gmail = mailbox.gmail
        headers_item = f"BODY.PEEK[HEADER.FIELDS ({' '.join(_mime.HEADER_FIELDS)})]"
        items = ["FLAGS", "INTERNALDATE", "RFC822.SIZE", "BODYSTRUCTURE", headers_item]
        if gmail:
            items += ["X-GM-LABELS", "X-GM-THRID"]
        data = mailbox.client.fetch(uids, items)
        bodies: dict[int, tuple[_mime.Part, str, bool]] = {}
        structures: dict[int, tuple[_mime.Part | None, list[_mime.Part]]] = {}
        for uid in uids:
            item = data.get(uid)
            if item is None:
                continue
            try:
                leaves = _mime.parts(item.get(b"BODYSTRUCTURE"))
            except (IndexError, TypeError, ValueError):
                leaves = []
            structures[uid] = _mime.split_parts(leaves)
        if max_chars > 0:
            bodies = self._bodies(mailbox, structures, max_chars)
        messages = []
        for uid in uids:
            item = data.get(uid)
            if item is None:
                continue
            body_part, attachments = structures[uid]
            messages.append(self._message(uid, item, body_part, attachments, bodies.get(uid),
                                          max_chars, gmail))
        return messages

    def _bodies(self, mailbox: Mailbox,
                structures: dict[int, tuple[_mime.Part | None, list[_mime.Part]]],
                max_chars: int) -> dict[int, tuple[_mime.Part, str, bool]]:
        """uid -> (body part, its text, whether the text is complete), in a few FETCHes."""
        by_section: dict[str, list[int]] = {}
        lengths: dict[str, int] = {}
        for uid, (part, _attachments) in structures.items():
            if part is not None:
                by_section.setdefault(part.section, []).append(uid)
                lengths[part.section] = max(lengths.get(part.section, 0),
                                            _fetch_length(part, max_chars))
        groups = {(number, lengths[number]): members for number, members in by_section.items()}
        ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        out: dict[int, tuple[_mime.Part, str, bool]] = {}
        for (number, length), members in ordered[:MAX_SECTION_FETCHES]:
            data = mailbox.client.fetch(members, [f"BODY.PEEK[{number}]<0.{length}>"])
            for uid in members:
                part = structures[uid][0]
                assert part is not None
                raw = section(data.get(uid, {}), f"BODY[{number}]".encode()) or b""
                complete = len(raw) < length or len(raw) >= part.size
                decoded = _mime.decode_body(raw, part.encoding, complete=complete)
                out[uid] = (part, _mime.to_text(decoded, part.charset, complete=complete),
                            complete)
        rest = [uid for _key, members in ordered[MAX_SECTION_FETCHES:] for uid in members]
        if rest:
            length = max(length for (_n, length), _m in ordered[MAX_SECTION_FETCHES:]) * 2
            length += 16384
            data = mailbox.client.fetch(rest, [f"BODY.PEEK[]<0.{length}>"])
            for uid in rest:
                part = structures[uid][0]
                assert part is not None
                raw = section(data.get(uid, {}), b"BODY[]") or b""
                complete = len(raw) < length
                out[uid] = (part, _text_from_raw(raw, part.content_type), complete)
        return out

    def _message(self, uid: int, item: dict[Any, Any], body_part: _mime.Part | None,
                 attachments: list[_mime.Part], body: tuple[_mime.Part, str, bool] | None,
                 max_chars: int, gmail: bool) -> dict[str, Any]:
        headers = _mime.parse_headers(section(item, b"BODY[HEADER") or b"")
        flags = [_mime.text(f) for f in item.get(b"FLAGS", ())]
        message: dict[str, Any] = {
            "id": uid,
            "message_id": _mime.header(headers, "Message-ID") or None,
            "from": _mime.header(headers, "From"),
            "to": _mime.addresses(headers, "To"),
            "cc": _mime.addresses(headers, "Cc"),
            "subject": _mime.header(headers, "Subject"),
            "date": _mime.iso_date(_mime.header(headers, "Date"), item.get(b"INTERNALDATE")),
            "unread": SEEN.decode() not in flags,
            "flagged": FLAGGED.decode() in flags,
            "flags": flags,
            "size": int(item.get(b"RFC822.SIZE") or 0),
        }
        reply_to = _mime.addresses(headers, "Reply-To")
        if reply_to:
            message["reply_to"] = reply_to
        in_reply_to = _mime.header(headers, "In-Reply-To")
        if in_reply_to:
            message["in_reply_to"] = in_reply_to
        if gmail:
            from imapclient.imap_utf7 import decode as utf7_decode

            labels = []
            for label in item.get(b"X-GM-LABELS", ()) or ():
                raw = label if isinstance(label, bytes) else str(label).encode()
                labels.append(utf7_decode(raw))
            message["labels"] = labels
            if item.get(b"X-GM-THRID") is not None:
                message["thread_id"] = str(item[b"X-GM-THRID"])
        if max_chars > 0:
            if body is None or body_part is None:
                message["body"] = ""
                message["body_format"] = None
                message["body_truncated"] = False
            else:
                text = body[1]
                if body_part.content_type == "text/html":
                    text = _mime.html_to_text(text)
                    message["body_format"] = "html converted to text"
                else:
                    message["body_format"] = "text"
                message["body"] = text[:max_chars]
                message["body_truncated"] = len(text) > max_chars or not body[2]
        message["attachments"] = [
            _mime.attachment_info(index, part) for index, part in enumerate(attachments, 1)
        ]
        return message


def _text_from_raw(raw: bytes, content_type: str) -> str:
    """The body text of a raw message (maybe cut short): its first ``content_type`` part."""
    parsed = email.parser.BytesParser(policy=email.policy.default).parsebytes(raw)
    for candidate in parsed.walk():
        if candidate.get_content_type() == content_type and not candidate.is_attachment():
            try:
                return str(candidate.get_content()).replace("\r\n", "\n")
            except Exception:
                payload = candidate.get_payload(decode=True) or b""
                return bytes(payload).decode("utf-8", "replace")
    return ""


def main(argv: list[str] | None = None) -> int:
    """Run ReadEmails from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReadEmails, argv)


if __name__ == "__main__":
    main()
