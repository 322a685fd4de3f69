"""Writing messages: addresses, bodies, workspace attachments, replies and forwards.

Every tool that sends or drafts builds its message with ``build``; the message being
answered or forwarded is read once with ``fetch_original``.
"""

from __future__ import annotations

import email.policy
import email.utils
import mimetypes
import os
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import TYPE_CHECKING, Any

from . import _mime
from ._errors import INVALID_ARGUMENTS, NOT_FOUND, TOO_LARGE, MailError, invalid, size_text
from ._imap import section
from ._params import BREAK, NOT_IN_A_LINE

if TYPE_CHECKING:
    from janito_core.workspace import Workspace

    from ._imap import Mailbox
    from ._settings import Settings

MAX_RECIPIENTS = 100
#: Gmail's limit for the files attached to one message, together (25 MB). The encoded
#: message is also checked against the SIZE the SMTP server announces (_smtp.py).
MAX_ATTACHMENT_BYTES = 25_000_000
#: How much of the original's text a reply quotes or a forward carries.
MAX_QUOTED_CHARS = 100_000
MESSAGE_ID = re.compile(r"^<[^<>\s]+@[^<>\s]+>$")
_BREAKS = re.compile(f"[{NOT_IN_A_LINE}]+")


# -- what a header can carry -----------------------------------------------------------
#
# The email package decodes the encoded words (=?utf-8?q?...?=) of a value it is given,
# and a Python without the fix for CVE-2024-6923 (3.10.13, for one) writes what they
# decode to as it is: "=?utf-8?q?a=0D=0ABcc:_x@y?=" as a Subject or an In-Reply-To
# becomes a Bcc header of its own, and as a file name a header of its part on every
# Python. So a value is judged by what the email package makes of it, not by its spelling.


def header_fits(name: str, value: str) -> bool:
    """Whether header ``name`` holding ``value`` is written as one line, whatever its
    encoded words decode to."""
    if BREAK.search(value):
        return False
    try:
        written = str(email.policy.default.header_factory(name, value))
    except Exception:  # its parser has failed with IndexError and the like on odd input
        return False
    return BREAK.search(written) is None


def filename_fits(name: str) -> bool:
    """Whether ``name`` can be an attachment's file name with its header on one line."""
    part = EmailMessage()
    try:
        part.set_content(b"", maintype="application", subtype="octet-stream", filename=name)
    except Exception:
        return False
    return BREAK.search(str(part["Content-Disposition"])) is None


def _defused(text: str, gap: str) -> str:
    """``text`` without line breaks, nor an encoded word that would decode to one."""
    return _BREAKS.sub(gap, text).replace("=?", f"={gap}?")


def settled(name: str, value: str) -> str:
    """A header value of a stored message as header ``name`` of a new one can carry it:
    as it is when it fits, else with its line breaks made spaces."""
    if header_fits(name, value):
        return value
    cleaned = _BREAKS.sub(" ", value)
    if header_fits(name, cleaned):
        return cleaned
    cleaned = _defused(value, " ")
    return cleaned if header_fits(name, cleaned) else ""


def usable_address(value: str) -> str | None:
    """An address of a stored message as a new message can name it: whole, else with its
    display name's line breaks made spaces, else without a display name; None when the
    address itself cannot be written."""
    if header_fits("To", value):
        return value
    pairs = email.utils.getaddresses([value])
    if len(pairs) != 1 or not pairs[0][1]:
        return None
    name, addr = pairs[0]
    for candidate in (email.utils.formataddr((_defused(name, " ").strip(), addr)), addr):
        if header_fits("To", candidate):
            return candidate
    return None


def usable_addresses(values: list[str]) -> tuple[list[str], list[str]]:
    """(the addresses a new message can name, the ones it cannot) of a stored message."""
    kept: list[str] = []
    left_out: list[str] = []
    for value in values:
        usable = usable_address(value)
        if usable is None:
            left_out.append(value)
        else:
            kept.append(usable)
    return kept, left_out


def safe_filename(name: str) -> str:
    """A stored attachment's file name as a new message can carry it: line breaks (and
    encoded words that decode to one) become "_"."""
    if filename_fits(name):
        return name
    for cleaned in (_BREAKS.sub("_", name), _defused(name, "_")):
        if filename_fits(cleaned):
            return cleaned
    return "attachment"


def addresses(field_name: str, values: list[str] | None) -> list[str]:
    """Validated "Name <addr>" or "addr" strings; MailError names the bad field."""
    out: list[str] = []
    for index, value in enumerate(values or []):
        field = f"{field_name}[{index}]"
        if not isinstance(value, str) or BREAK.search(value):
            raise invalid(field, "must be one line of text")
        pairs = email.utils.getaddresses([value])
        if not pairs or any(not addr or "@" not in addr or " " in addr for _n, addr in pairs):
            raise invalid(field, f"holds {value[:80]!r}, which is not an email address")
        if len(pairs) > 1:
            # before the fixes of CVE-2023-27043 a name with a colon is read as several
            raise invalid(field, f"holds {len(pairs)} addresses; give each its own item")
        formatted = email.utils.formataddr(pairs[0])
        if not header_fits("To", formatted):
            raise invalid(field, "holds a name that would break the header into lines "
                                 "(an encoded word that decodes to a line break)")
        out.append(formatted)
    return out


def bare(values: list[str]) -> list[str]:
    """The addresses alone, without display names."""
    return [addr for _name, addr in email.utils.getaddresses(values) if addr]


def sender_address(settings: Settings) -> str:
    """The envelope sender: the From address without its display name."""
    return (bare([settings.from_address]) or [settings.from_address])[0]


def own_addresses(settings: Settings) -> set[str]:
    """The account's own addresses, lower-cased (a reply-all leaves them out)."""
    return {a.lower() for a in bare([settings.username, settings.from_address])}


def check_recipients(*lists: list[str]) -> list[str]:
    recipients = bare([a for values in lists for a in values])
    if len(recipients) > MAX_RECIPIENTS:
        raise MailError(INVALID_ARGUMENTS, f"at most {MAX_RECIPIENTS} recipients per message")
    return recipients


# -- attachments ------------------------------------------------------------------------


@dataclass
class Attachment:
    filename: str
    content_type: str
    data: bytes = field(repr=False)
    #: The name the stored attachment had, when it could not be carried as it was.
    renamed_from: str | None = None

    @classmethod
    def received(cls, filename: str, content_type: str, data: bytes) -> Attachment:
        """An attachment of a stored message, its name made safe to write again."""
        safe = safe_filename(filename)
        return cls(safe, content_type, data, None if safe == filename else filename)


def renamed(attachments: list[Attachment]) -> list[dict[str, str]]:
    """The attachments whose names were changed, for a result to say so."""
    return [{"filename": a.filename, "original": a.renamed_from} for a in attachments
            if a.renamed_from is not None]


def _content_type(filename: str) -> str:
    guessed, encoding = mimetypes.guess_type(filename)
    if guessed is None or encoding is not None:  # a .tar.gz is gzip data, not a tar
        return "application/octet-stream"
    return guessed


def workspace_attachments(workspace: Workspace, paths: list[str] | None, *,
                          budget: int = MAX_ATTACHMENT_BYTES) -> list[Attachment]:
    """The files ``paths`` names in the workspace, read through it.

    Each is opened once; the sizes of the opened files are checked against ``budget``
    before anything is read, and a file that grows meanwhile is caught while reading.
    """
    from janito_core.workspace import NotRegularFile, read_fd

    paths = list(paths or [])
    for index, path in enumerate(paths):
        if not filename_fits(_attached_name(path)):
            raise invalid(f"attachments[{index}]", "names a file whose name would break the "
                                                   "header of its part into lines")
    opened: list[tuple[int, os.stat_result, str]] = []
    try:
        for path in paths:
            try:
                opened.append(workspace.open_regular(path))
            except FileNotFoundError:
                raise MailError(NOT_FOUND, f"there is no file {path!r} in the workspace to "
                                           "attach", path=path) from None
            except (IsADirectoryError, NotRegularFile):
                raise MailError(INVALID_ARGUMENTS, f"{path!r} is not a regular file; attach "
                                                   "files, one by one", path=path) from None
            except PermissionError:
                raise MailError(INVALID_ARGUMENTS, f"{path!r} cannot be read (permission "
                                                   "denied)", path=path) from None
        total = sum(info.st_size for _fd, info, _shown in opened)
        if total > budget:
            raise MailError(TOO_LARGE, f"the attachments hold {size_text(total)} together; at "
                                       f"most {size_text(budget)} can be sent (Gmail's limit): "
                                       "send fewer or smaller files, or share a link instead",
                            size=total, limit=budget)
        found = []
        left = budget
        for fd, info, shown in opened:
            data = read_fd(fd, info.st_size, left + 1)
            left -= len(data)
            if left < 0:
                raise MailError(TOO_LARGE, f"{shown} grew while it was read; the attachments "
                                           f"now exceed {size_text(budget)}", limit=budget)
            name = _attached_name(shown)
            found.append(Attachment(name, _content_type(name), data))
        return found
    finally:
        for fd, _info, _shown in opened:
            os.close(fd)


def _attached_name(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or "attachment"


# -- building -----------------------------------------------------------------------------


@dataclass
class Thread:
    """The headers that put a message in the conversation of another."""

    in_reply_to: str
    references: list[str]
    subject: str = ""


def build(*, sender: str, to: list[str], cc: list[str], subject: str, body: str,
          html_body: str | None = None, attachments: list[Attachment] | None = None,
          thread: Thread | None = None, bcc: list[str] | None = None,
          message_id: str | None = None) -> EmailMessage:
    """A complete message: text (and HTML alternative), then the attachments.

    ``bcc`` is written as a header only for a draft (a sent message never carries it).
    Every header is checked as the email package would write it, so no value, whatever
    its encoded words decode to, adds a line; MailError names the argument that would.
    """
    msg = EmailMessage()

    def put(name: str, value: str, field_name: str) -> None:
        if not header_fits(name, value):
            raise invalid(field_name, "must be one line of text, also once its encoded "
                                      "words (=?...?=) are decoded")
        msg[name] = value

    put("From", sender, "from")
    if to:
        put("To", ", ".join(to), "to")
    if cc:
        put("Cc", ", ".join(cc), "cc")
    if bcc:
        put("Bcc", ", ".join(bcc), "bcc")
    put("Subject", subject, "subject")
    msg["Date"] = email.utils.formatdate(localtime=True)
    if message_id is None:
        domain = (bare([sender]) or [sender])[0].rsplit("@", 1)[-1].strip("> ") or None
        message_id = email.utils.make_msgid(domain=domain)
    put("Message-ID", message_id, "message_id")
    if thread is not None:
        put("In-Reply-To", thread.in_reply_to, "in_reply_to")
        put("References", " ".join(thread.references), "in_reply_to")
    msg.set_content(body)
    if html_body:
        msg.add_alternative(html_body, subtype="html")
    for item in attachments or []:
        if not filename_fits(item.filename):
            raise invalid("attachments", f"names a file, {item.filename!r}, whose name would "
                                         "break the header of its part into lines")
        maintype, _, subtype = item.content_type.partition("/")
        msg.add_attachment(item.data, maintype=maintype, subtype=subtype or "octet-stream",
                           filename=item.filename)
    return msg


def prefixed(prefix: str, subject: str) -> str:
    """"Re: subject" (or "Fwd: "), without stacking a prefix that is there already."""
    if re.match(rf"^\s*{re.escape(prefix)}\s", subject + " ", re.I):
        return subject
    return f"{prefix} {subject}".strip()


# -- the message being answered or forwarded ---------------------------------------------


@dataclass
class Original:
    uid: int
    folder: str
    sender: str
    reply_to: list[str]
    to: list[str]
    cc: list[str]
    subject: str
    date: str
    message_id: str
    references: list[str]
    text: str = ""
    html: str | None = None
    attachments: list[Attachment] = field(default_factory=list)

    def thread(self) -> Thread:
        """In-Reply-To this message; References: its own, then its Message-ID (RFC 5322)."""
        chain = [r for r in self.references if r != self.message_id][-20:]
        return Thread(self.message_id, [*chain, self.message_id], self.subject)


def thread_of(value: str) -> Thread | None:
    """A Thread for a Message-ID given as text, or None when ``value`` is not one."""
    value = value.strip()
    if MESSAGE_ID.match(value):
        return Thread(value, [value])
    return None


def fetch_original(mailbox: Mailbox, folder: str, uid: int, *, text: bool = True,
                   html: bool = False, attachments: bool = False,
                   budget: int = MAX_ATTACHMENT_BYTES, field: str = "folder") -> Original:
    """Read message ``uid`` of ``folder`` (the argument ``field``): headers, and as asked
    its text, HTML and attachments (refused beyond ``budget``), in at most two FETCHes.
    The folder is left selected read-only."""
    mailbox.select(folder, readonly=True, field=field)
    data = mailbox.client.fetch([uid], ["BODYSTRUCTURE", "BODY.PEEK[HEADER]"])
    item = data.get(uid)
    if item is None:
        raise MailError(NOT_FOUND, f"there is no message with id {uid} in {folder}; "
                                   "ReadEmails lists the ids there are", id=uid)
    headers = _mime.parse_headers(section(item, b"BODY[HEADER") or b"")
    message_id = _mime.header(headers, "Message-ID")
    if not MESSAGE_ID.match(message_id) or not header_fits("In-Reply-To", message_id):
        raise MailError(NOT_FOUND, f"message {uid} has no Message-ID header that an answer "
                                   "can name, so it could not be threaded with it; nothing "
                                   "was sent", id=uid)
    references = [r for r in re.findall(r"<[^<>\s]+>", _mime.header(headers, "References"))
                  or re.findall(r"<[^<>\s]+>", _mime.header(headers, "In-Reply-To"))
                  if header_fits("References", r)]
    try:
        leaves = _mime.parts(item.get(b"BODYSTRUCTURE"))
    except (IndexError, TypeError, ValueError):
        leaves = []
    body, attached = _mime.split_parts(leaves)
    html_part = next((p for p in leaves if p.content_type == "text/html"
                      and p.disposition != "attachment" and p.filename is None), None)
    wanted = [p for p in (body if text else None, html_part if html else None) if p is not None]
    if attachments:
        total = sum(p.decoded_size for p in attached)
        if total > budget:
            raise MailError(TOO_LARGE, f"the attachments of message {uid} hold about "
                                       f"{size_text(total)}; at most {size_text(budget)} can be "
                                       "sent: forward it without attachments", size=total,
                            limit=budget)
        wanted += attached
    texts: dict[str, bytes] = {}
    if wanted:
        sections = dict.fromkeys(p.section for p in wanted)
        fetched = mailbox.client.fetch([uid], [f"BODY.PEEK[{s}]" for s in sections]).get(uid, {})
        for number in sections:
            raw = section(fetched, f"BODY[{number}]".encode()) or b""
            texts[number] = raw
    original = Original(
        uid=uid, folder=folder,
        sender=_mime.header(headers, "From"),
        reply_to=_mime.addresses(headers, "Reply-To"),
        to=_mime.addresses(headers, "To"),
        cc=_mime.addresses(headers, "Cc"),
        subject=settled("Subject", _mime.header(headers, "Subject")),
        date=_mime.header(headers, "Date"),
        message_id=message_id,
        references=references,
    )
    if text and body is not None:
        content = _decoded_text(body, texts.get(body.section, b""))
        original.text = (_mime.html_to_text(content) if body.content_type == "text/html"
                         else content)
    if html and html_part is not None:
        original.html = _decoded_text(html_part, texts.get(html_part.section, b""))
    if attachments:
        for index, part in enumerate(attached, 1):
            info = _mime.attachment_info(index, part)
            data = _mime.decode_body(texts.get(part.section, b""), part.encoding, complete=True)
            original.attachments.append(Attachment.received(str(info["filename"]),
                                                            part.content_type, data))
    return original


def _decoded_text(part: _mime.Part, raw: bytes) -> str:
    decoded = _mime.decode_body(raw, part.encoding, complete=True)
    return _mime.to_text(decoded, part.charset, complete=True)


# -- replies and forwards -------------------------------------------------------------------


def reply_recipients(original: Original, own: set[str], *,
                     reply_all: bool) -> tuple[list[str], list[str], list[str]]:
    """(to, cc, left out) of a reply: the author (Reply-To, else From); with ``reply_all``
    also every other recipient. The account's own addresses are left out, and nobody is
    named twice; so is an address a header cannot name (the third list).

    Answering one's own message goes to its recipients, as mail programs do.
    """
    author = original.reply_to or ([original.sender] if original.sender else [])
    mine = bool(author) and all(a.lower() in own for a in bare(author))
    if mine:
        to, cc = list(original.to), list(original.cc) if reply_all else []
    else:
        to = list(author) + (list(original.to) if reply_all else [])
        cc = list(original.cc) if reply_all else []
    seen = set(own)
    kept: list[list[str]] = [[], []]
    left_out: list[str] = []
    for index, values in enumerate((to, cc)):
        for value in values:
            address = (bare([value]) or [""])[0].lower()
            if address and address not in seen:
                seen.add(address)
                usable = usable_address(value)
                if usable is None:
                    left_out.append(value)
                else:
                    kept[index].append(usable)
    to, cc = kept
    if not to and cc:
        to, cc = cc[:1], cc[1:]
    if not to:  # a message to oneself: the reply goes there too
        to = [a for a in map(usable_address, author[:1] or original.to[:1]) if a is not None]
    if not to:
        raise MailError(NOT_FOUND, f"message {original.uid} names no address an answer could "
                                   "be sent to; nothing was sent", id=original.uid,
                        left_out=left_out)
    return to, cc, left_out


def _when(original: Original) -> str:
    try:
        moment = email.utils.parsedate_to_datetime(original.date)
    except (TypeError, ValueError, IndexError):
        return original.date or "an earlier day"
    return moment.strftime("%a, %d %b %Y at %H:%M")


def quoted(original: Original) -> str:
    """The original's text as a reply quotes it, after one line naming author and date."""
    text = original.text[:MAX_QUOTED_CHARS].rstrip()
    lines = "\n".join(("> " + line) if line else ">" for line in text.splitlines())
    return f"On {_when(original)}, {original.sender} wrote:\n{lines}\n"


def reply_bodies(body: str, html_body: str | None, original: Original, *,
                 quote: bool) -> tuple[str, str | None]:
    """(text, HTML or None) of a reply: the answer, then the quoted original if asked."""
    if not quote:
        return body, html_body
    text = body.rstrip() + "\n\n" + quoted(original)
    if not html_body:
        return text, None
    import html

    cited = html.escape(quoted(original).split("\n", 1)[0])
    return text, (f"{html_body}<br><div>{cited}</div><blockquote>"
                  f"{text_as_html(original.text[:MAX_QUOTED_CHARS])}</blockquote>")


def forwarded(original: Original) -> str:
    """The block a forward carries: the original's main headers, then its text."""
    head = ["---------- Forwarded message ---------", f"From: {original.sender}",
            f"Date: {original.date}", f"Subject: {original.subject}"]
    if original.to:
        head.append(f"To: {', '.join(original.to)}")
    if original.cc:
        head.append(f"Cc: {', '.join(original.cc)}")
    return "\n".join(head) + "\n\n" + original.text[:MAX_QUOTED_CHARS].rstrip() + "\n"


def forwarded_html(original: Original, note_html: str) -> str | None:
    """An HTML alternative for a forward of an HTML message (its markup kept)."""
    if original.html is None:
        return None
    import html

    head = "<br>".join(html.escape(line) for line in forwarded(original).split("\n\n", 1)[0]
                       .splitlines())
    return (f"{note_html}<br><br><div>{head}</div><br>"
            f"<blockquote>{original.html[:MAX_QUOTED_CHARS]}</blockquote>")


def text_as_html(text: str) -> str:
    import html

    return html.escape(text).replace("\n", "<br>\n")


def parse_raw(raw: bytes) -> Any:
    """A stored message (a draft) parsed whole."""
    import email.parser
    import email.policy

    return email.parser.BytesParser(policy=email.policy.default).parsebytes(raw)
