"""Reading messages for results: headers, flags, labels, text bodies, attachment lists.

Round trips stay constant in the number of messages: one FETCH of flags, sizes,
structures and headers for all of them, then one FETCH per distinct body section
("1", "1.1", ...; bodies fetched partially, just enough for ``max_chars``), with at most
MAX_SECTION_FETCHES of those before the rest share one FETCH of the raw message start.
Attachments are never downloaded.
"""

from __future__ import annotations

import email.parser
import email.policy
import re
from dataclasses import dataclass
from typing import Any

from . import _mime
from ._imap import FLAGGED, SEEN, Mailbox, Selection, section

MAX_SECTION_FETCHES = 6


def _fetch_length(part: _mime.Part, max_chars: int) -> int:
    """How many encoded bytes of a body part give ``max_chars`` characters of text."""
    if part.content_type == "text/html":
        return max_chars * 24 + 8192
    return max_chars * 6 + 1024


def read_messages(mailbox: Mailbox, uids: list[int], max_chars: int) -> list[dict[str, Any]]:
    """The messages ``uids`` of the selected folder as results show them, in that order,
    in a fixed number of FETCHes (see the module docstring)."""
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
        bodies = _bodies(mailbox, structures, max_chars)
    messages = []
    for uid in uids:
        item = data.get(uid)
        if item is None:
            continue
        body_part, attachments = structures[uid]
        messages.append(_message(uid, item, body_part, attachments, bodies.get(uid),
                                      max_chars, gmail))
    return messages

def _bodies(mailbox: Mailbox,
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

def _message(uid: int, item: dict[Any, Any], body_part: _mime.Part | None,
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
    bcc = _mime.addresses(headers, "Bcc")  # kept in drafts and in some sent copies
    if bcc:
        message["bcc"] = bcc
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


# -- which messages: pages and threads ------------------------------------------------------


@dataclass
class Page:
    """The ids of one page, newest first, and what lies beyond it."""

    uids: list[int]
    matching: int  # every message the criteria match in the folder
    has_more: bool  # older matching messages exist past this page


def page(mailbox: Mailbox, selection: Selection, *, exists: int, limit: int,
         before_id: int | None) -> Page:
    """The newest ``limit`` matching messages, or those older than ``before_id``.

    Without criteria the page is found by sequence numbers, so a mailbox of any size
    costs one or two short SEARCHes: the messages at or past the cursor are counted (a
    UID SEARCH of ``before_id:*``, small while paging near the newest), and the page is
    the sequence range just below them.
    """
    if selection.ids is not None or selection.has_filters():
        return page_of(mailbox.search(selection), limit, before_id)
    if exists == 0:
        return Page([], 0, False)
    newer = 0
    if before_id is not None:
        # "n:*" matches the last message even when n is past it; keep only what is
        newer = len([u for u in mailbox.client.search(f"UID {before_id}:*") if u >= before_id])
    top = exists - newer
    if top <= 0:
        return Page([], exists, False)
    low = max(1, top - limit + 1)
    uids = sorted(int(u) for u in mailbox.client.search(f"{low}:{top}"))
    return Page(uids[::-1], exists, low > 1)


def page_of(found: list[int], limit: int, before_id: int | None) -> Page:
    """The page of ``found`` (every matching id, ascending) below ``before_id``."""
    below = [u for u in found if before_id is None or u < before_id]
    return Page(below[-limit:][::-1], len(found), len(below) > limit)


_REFERENCE = re.compile(r"<[^<>\s]+>")
THREAD_ROUNDS = 3


def gmail_thread(mailbox: Mailbox, folder: str, uid: int) -> tuple[str, list[int]]:
    """(the folder holding the whole conversation, its ids there) by Gmail's thread id."""
    from ._errors import NOT_FOUND, MailError

    mailbox.select(folder, readonly=True)
    data = mailbox.client.fetch([uid], ["X-GM-THRID"])
    thread = data.get(uid, {}).get(b"X-GM-THRID")
    if thread is None:
        raise MailError(NOT_FOUND, f"there is no message with id {uid} in {folder}", id=uid)
    where = mailbox.special_folder("all", ("[gmail]/all mail", "[google mail]/all mail")) \
        or folder
    mailbox.select(where, readonly=True)
    return where, sorted(int(u) for u in mailbox.client.search(["X-GM-THRID", int(thread)]))


def reference_thread(mailbox: Mailbox, folder: str, uid: int) -> list[tuple[str, int]]:
    """(folder, id) of every message of the conversation of ``uid``: in ``folder`` and in
    the Sent folder, the messages whose Message-ID, References or In-Reply-To share a
    Message-ID with it, followed for a few rounds so that replies to replies are found."""
    from ._errors import NOT_FOUND, MailError

    mailbox.select(folder, readonly=True)
    fields = "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID REFERENCES IN-REPLY-TO)]"
    item = mailbox.client.fetch([uid], [fields]).get(uid)
    if item is None:
        raise MailError(NOT_FOUND, f"there is no message with id {uid} in {folder}", id=uid)
    known = set(_REFERENCE.findall((section(item, b"BODY[HEADER") or b"").decode("utf-8",
                                                                                 "replace")))
    if not known:
        return [(folder, uid)]
    places = [folder]
    sent = mailbox.special_folder("sent", ("sent", "sent items", "sent messages",
                                           "[gmail]/sent mail", "inbox.sent"))
    if sent is not None and sent != folder:
        places.append(sent)
    found: dict[tuple[str, int], None] = {(folder, uid): None}
    searched: set[str] = set()
    for _round in range(THREAD_ROUNDS):
        fresh = sorted(known - searched)
        if not fresh:
            break
        searched |= set(fresh)
        for place in places:
            mailbox.select(place, readonly=True)
            terms: list[Any] = []
            for reference in fresh:
                for header in ("Message-ID", "References", "In-Reply-To"):
                    terms.append(["HEADER", header, reference])
            criteria: list[Any] = ["OR"] * (len(terms) - 1)
            for term in terms:
                criteria.extend(term)
            uids = [int(u) for u in mailbox.client.search(criteria)]
            new = [u for u in uids if (place, u) not in found]
            for u in uids:
                found[(place, u)] = None
            if new:
                headers = mailbox.client.fetch(new, [fields])
                for value in headers.values():
                    text = (section(value, b"BODY[HEADER") or b"").decode("utf-8", "replace")
                    known |= set(_REFERENCE.findall(text))
    return list(found)
