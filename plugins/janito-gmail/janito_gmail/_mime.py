"""Reading messages from what an IMAP server sends: structures, headers, bodies, HTML."""

from __future__ import annotations

import base64
import binascii
import email.header
import email.parser
import email.policy
import email.utils
import quopri
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

HEADER_FIELDS = ("FROM", "TO", "CC", "BCC", "REPLY-TO", "SUBJECT", "DATE", "MESSAGE-ID",
                 "IN-REPLY-TO", "REFERENCES")


def text(value: Any) -> str:
    """A bytes or str atom from imapclient as str (None as "")."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# -- BODYSTRUCTURE ------------------------------------------------------------------


@dataclass
class Part:
    """One leaf of a message's MIME tree as BODYSTRUCTURE describes it."""

    section: str  # the IMAP section number, e.g. "1", "2.1"
    content_type: str  # "text/plain"
    params: dict[str, str]
    encoding: str  # "7bit", "base64", ...
    size: int  # octets of the encoded body
    disposition: str  # "attachment", "inline" or ""
    disposition_params: dict[str, str]

    @property
    def maintype(self) -> str:
        return self.content_type.split("/", 1)[0]

    @property
    def filename(self) -> str | None:
        return self.disposition_params.get("filename") or self.params.get("name") or None

    @property
    def charset(self) -> str:
        return self.params.get("charset") or "utf-8"

    @property
    def decoded_size(self) -> int:
        """The body's size once decoded; estimated from the line count for base64."""
        if self.encoding == "base64":
            lines = -(-self.size // 78)  # 76 characters and CRLF per line
            return max(0, (self.size - 2 * lines) * 3 // 4)
        return self.size


def _pairs(raw: Any) -> dict[str, str]:
    """A BODYSTRUCTURE parameter list, RFC 2231 and encoded words decoded, keys lowered."""
    if not isinstance(raw, (tuple, list)):
        return {}
    items = [text(x) for x in raw]
    plain: dict[str, str] = {}
    continued: dict[str, list[tuple[int, bool, str]]] = {}
    for key, value in zip(items[0::2], items[1::2], strict=False):
        key = key.lower()
        match = re.fullmatch(r"([^*]+)\*(\d+)?(\*)?", key)
        if match and (match.group(2) is not None or key.endswith("*")):
            name = match.group(1)
            index = int(match.group(2) or 0)
            extended = key.endswith("*")
            continued.setdefault(name, []).append((index, extended, value))
        else:
            plain[key] = _decode_words(value)
    for name, pieces in continued.items():
        pieces.sort()
        joined = ""
        charset = "utf-8"
        for index, extended, value in pieces:
            if extended:
                if index == 0 and value.count("'") >= 2:
                    charset, _lang, value = value.split("'", 2)
                    charset = charset or "utf-8"
                joined += _percent(value, charset)
            else:
                joined += value
        plain[name] = joined
    return plain


def _percent(value: str, charset: str) -> str:
    raw = re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), value)
    try:
        return raw.encode("latin-1").decode(charset, "replace")
    except (LookupError, UnicodeEncodeError):
        return raw


def _decode_words(value: str) -> str:
    if "=?" not in value:
        return value
    try:
        return str(email.header.make_header(email.header.decode_header(value)))
    except Exception:
        return value


def _disposition(raw: Any) -> tuple[str, dict[str, str]]:
    if isinstance(raw, (tuple, list)) and raw:
        return text(raw[0]).lower(), _pairs(raw[1] if len(raw) > 1 else None)
    return "", {}


def parts(structure: Any, prefix: str = "") -> list[Part]:
    """Every leaf of a BODYSTRUCTURE (imapclient's BodyData), in order, with sections."""
    if structure is None:
        return []
    first = structure[0]
    if isinstance(first, list):  # multipart: ([children], subtype, params, disposition, ...)
        found: list[Part] = []
        for number, child in enumerate(first, start=1):
            section = f"{prefix}.{number}" if prefix else str(number)
            found.extend(parts(child, section))
        return found
    maintype = text(first).lower()
    subtype = text(structure[1]).lower()
    params = _pairs(structure[2])
    encoding = text(structure[5]).lower() or "7bit"
    try:
        size = int(structure[6] or 0)
    except (TypeError, ValueError):
        size = 0
    # extension data follows the type-specific fields
    if maintype == "text":
        disposition_at = 9
    elif maintype == "message" and subtype in ("rfc822", "global"):
        disposition_at = 11
    else:
        disposition_at = 8
    disposition, disposition_params = _disposition(
        structure[disposition_at] if len(structure) > disposition_at else None
    )
    return [Part(prefix or "1", f"{maintype}/{subtype}", params, encoding, size, disposition,
                 disposition_params)]


def split_parts(leaves: list[Part]) -> tuple[Part | None, list[Part]]:
    """(the part to show as the body, the attachments) of one message.

    The body is the first text/plain part that is not an attachment, else the first
    such text/html part. Attachments are every other part except alternative text
    renderings of the body.
    """
    def is_attachment(part: Part) -> bool:
        if part.disposition == "attachment":
            return True
        return part.content_type not in ("text/plain", "text/html") or part.filename is not None

    body = next((p for p in leaves if p.content_type == "text/plain" and not is_attachment(p)),
                None)
    if body is None:
        body = next((p for p in leaves if p.content_type == "text/html"
                     and not is_attachment(p)), None)
    attachments = [p for p in leaves if is_attachment(p)]
    return body, attachments


def attachment_info(index: int, part: Part) -> dict[str, Any]:
    return {
        "index": index,
        "filename": part.filename or f"attachment-{index}{_extension(part.content_type)}",
        "content_type": part.content_type,
        "size": part.decoded_size,
        "inline": part.disposition != "attachment",
    }


def _extension(content_type: str) -> str:
    import mimetypes

    return mimetypes.guess_extension(content_type) or ".bin"


# -- bodies -------------------------------------------------------------------------


def decode_body(data: bytes, encoding: str, *, complete: bool) -> bytes:
    """Undo a Content-Transfer-Encoding; ``complete`` False means ``data`` is a prefix."""
    if encoding == "base64":
        compact = re.sub(rb"[^A-Za-z0-9+/=]", b"", data)
        if not complete:
            compact = compact[: len(compact) - len(compact) % 4]
        try:
            return base64.b64decode(compact + b"=" * (-len(compact) % 4))
        except (binascii.Error, ValueError):
            return base64.b64decode(compact[: len(compact) - len(compact) % 4] or b"",
                                    validate=False)
    if encoding == "quoted-printable":
        if not complete:
            data = re.sub(rb"=[0-9A-Fa-f]?$", b"", data)
        return quopri.decodestring(data)
    return data


def to_text(data: bytes, charset: str, *, complete: bool) -> str:
    try:
        decoded = data.decode(charset, "replace")
    except LookupError:
        decoded = data.decode("utf-8", "replace")
    if not complete:
        decoded = decoded.rstrip("\ufffd")
    return decoded.replace("\r\n", "\n")


_PRE_SPACE = "\ue000"
_PRE_TAB = "\ue001"


class _HtmlText(HTMLParser):
    _BLOCK = frozenset({
        "p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6",
        "blockquote", "pre", "section", "article", "header", "footer", "hr", "dt", "dd",
    })
    _HIDDEN = frozenset({"script", "style", "head", "title", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.hidden = 0
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self.hidden += 1
        elif tag == "li":
            self.out.append("\n- ")
        elif tag in self._BLOCK:
            self.out.append("\n")
        if tag == "pre":
            self.pre += 1
        if tag in ("td", "th"):
            self.out.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "hr"):
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self._BLOCK and tag != "li":
            self.out.append("\n")
        if tag == "pre":
            self.pre = max(0, self.pre - 1)

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if self.pre:  # keep its spaces through the line clean-up of html_to_text
            data = data.replace("\r\n", "\n").replace(" ", _PRE_SPACE).replace("\t", _PRE_TAB)
        else:
            data = re.sub(r"[ \t\r\n\f]+", " ", data)
        self.out.append(data)


def html_to_text(html: str) -> str:
    """Readable text of an HTML document: no tags, scripts or styles, blocks on lines."""
    parser = _HtmlText()
    try:
        parser.feed(html)
        parser.close()
    except Exception:
        return re.sub(r"<[^>]*>", " ", html)
    joined = "".join(parser.out).replace("\xa0", " ")
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in joined.split("\n")]
    result: list[str] = []
    for line in lines:
        if line or (result and result[-1]):
            result.append(line)
    return "\n".join(result).strip().replace(_PRE_SPACE, " ").replace(_PRE_TAB, "\t")


# -- headers ------------------------------------------------------------------------


def parse_headers(raw: bytes) -> Any:
    """Header fields of a message as a compat32 Message (fast; decoded on access)."""
    text_form = raw.decode("utf-8", "replace") if raw else ""
    return email.parser.HeaderParser(policy=email.policy.compat32).parsestr(text_form,
                                                                            headersonly=True)


def header(headers: Any, name: str) -> str:
    """One header field decoded (encoded words undone), on one line."""
    try:
        value = headers.get(name)
    except Exception:
        value = None
    if value is None:
        return ""
    return re.sub(r"\s+", " ", _decode_words(str(value))).strip()


def _display(name: str, addr: str) -> str:
    if not name:
        return addr
    if re.search(r'[(),.:;<>@\[\]"\\]', name):
        name = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{name} <{addr}>"


def addresses(headers: Any, name: str) -> list[str]:
    """The addresses of an address header, each as "Name <addr>" or "addr"."""
    try:
        values = headers.get_all(name) or []
    except Exception:
        return []
    return address_list([str(v) for v in values])


def address_list(values: list[str]) -> list[str]:
    """The addresses of address header values as sent (encoded words undone in names)."""
    found = []
    for display, addr in email.utils.getaddresses(values):
        if addr:
            found.append(_display(re.sub(r"\s+", " ", _decode_words(display)).strip(), addr))
    return found


def iso_date(value: str, fallback: Any = None) -> str | None:
    """An RFC 5322 date header as ISO 8601, else ``fallback`` (a datetime) as ISO."""
    if value:
        try:
            return email.utils.parsedate_to_datetime(value).isoformat()
        except (TypeError, ValueError, IndexError):
            pass
    if fallback is not None and hasattr(fallback, "isoformat"):
        return str(fallback.isoformat())
    return None
