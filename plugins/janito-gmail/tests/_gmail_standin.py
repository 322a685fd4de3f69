"""A small stand-in for what Gmail's IMAP adds and Dovecot cannot serve: the X-GM-* extensions.

``GmailStandIn`` is an IMAP proxy on loopback (TLS with the test certificate) in front
of a Dovecot laid out like Gmail. Every command goes through to the real Dovecot
unchanged, except:

- CAPABILITY answers (and the ones in greetings and login replies) also announce
  ``X-GM-EXT-1``;
- ``FETCH`` of ``X-GM-LABELS``, ``X-GM-THRID`` and ``X-GM-MSGID``: the proxy asks Dovecot
  for the messages' keywords and threading headers first, then adds those items to
  Dovecot's FETCH answer. A label is kept as a keyword ``gl_<hex of its UTF-8 name>``
  (hidden from FLAGS); the thread id is a number derived from the first Message-ID of
  the thread (References, else In-Reply-To, else the message's own), the message id from
  the Message-ID;
- ``STORE [+-]X-GM-LABELS[.SILENT] (...)`` becomes a STORE of those keywords (and, as on
  Gmail, a label that does not exist yet is created as a folder);
- ``SEARCH X-GM-THRID n`` (alone) is answered by the proxy from the folder's headers;
  ``SEARCH X-GM-RAW "..."`` is translated into IMAP criteria for the few operators the
  tests use (``from:``, ``subject:``, ``label:``, ``is:unread``, ``is:starred``, words).

What it does not do: Gmail's All Mail (it is an ordinary folder here: the tests put in it
what Gmail would), labels as folders that hold the labelled messages, non-ASCII X-GM-RAW.
"""

from __future__ import annotations

import hashlib
import re
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

from imapclient.imap_utf7 import decode as utf7_decode
from imapclient.imap_utf7 import encode as utf7_encode

_LITERAL = re.compile(rb"\{(\d+)(\+?)\}\r\n$")
_FETCH_CMD = re.compile(rb"^(\S+) (UID )?FETCH (\S+) \((.*)\)\r\n$", re.I)
_STORE_CMD = re.compile(rb"^(\S+) (UID )?STORE (\S+) ([+-]?)X-GM-LABELS(\.SILENT)? \((.*)\)\r\n$",
                        re.I)
_THRID_SEARCH = re.compile(rb"^(\S+) (UID )?SEARCH X-GM-THRID (\d+)\r\n$", re.I)
_RAW_SEARCH = re.compile(
    rb'^(\S+) (UID )?SEARCH (.*?)X-GM-RAW ("(?:[^"\\]|\\.)*"|[^\s"]+)(.*)\r\n$', re.I)
_GM_ITEMS = (b"X-GM-LABELS", b"X-GM-THRID", b"X-GM-MSGID")
_FLAGS = re.compile(rb"FLAGS \(([^)]*)\)")
_KEYWORD = re.compile(rb"^gl_([0-9a-f]+)$")
_THREAD_HEADERS = b"BODY.PEEK[HEADER.FIELDS (MESSAGE-ID REFERENCES IN-REPLY-TO)]"


def label_keyword(label: str) -> bytes:
    return b"gl_" + label.encode("utf-8").hex().encode()


def _quote(text: bytes) -> bytes:
    return b'"' + text.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def _strings(raw: bytes) -> list[bytes]:
    """The atoms and quoted strings of a parenthesised list's inside, unquoted."""
    out = []
    for match in re.finditer(rb'"((?:[^"\\]|\\.)*)"|([^\s()"]+)', raw):
        if match.group(1) is not None:
            out.append(re.sub(rb"\\(.)", rb"\1", match.group(1)))
        else:
            out.append(match.group(2))
    return out


def _number(message_id: str) -> int:
    return int(hashlib.sha1(message_id.encode()).hexdigest()[:15], 16)


def _ids(value: str) -> list[str]:
    return re.findall(r"<[^<>\s]+>", value)


class _Info:
    """What the proxy learnt about one message from Dovecot."""

    def __init__(self, uid: int, flags: list[bytes], headers: bytes) -> None:
        import email.parser
        import email.policy

        self.uid = uid
        self.labels = [bytes.fromhex(m.group(1).decode()).decode("utf-8")
                       for f in flags if (m := _KEYWORD.match(f))]
        parsed = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(headers)
        own = _ids(str(parsed.get("Message-ID", "")))
        references = _ids(str(parsed.get("References", "")))
        replied = _ids(str(parsed.get("In-Reply-To", "")))
        root = (references or replied or own or [f"<uid-{uid}@stand-in>"])[0]
        self.thread = _number(root)
        self.msgid = _number(own[0] if own else f"<uid-{uid}@stand-in>")

    def items(self, wanted: list[bytes]) -> bytes:
        parts = []
        if b"X-GM-THRID" in wanted:
            parts.append(b"X-GM-THRID %d" % self.thread)
        if b"X-GM-MSGID" in wanted:
            parts.append(b"X-GM-MSGID %d" % self.msgid)
        if b"X-GM-LABELS" in wanted:
            parts.append(b"X-GM-LABELS (" + self.label_list() + b")")
        return b" ".join(parts)

    def label_list(self) -> bytes:
        return b" ".join(_quote(utf7_encode(label)) for label in self.labels)


class _Session:
    """One client connection and its connection to Dovecot, relayed command by command."""

    def __init__(self, client: ssl.SSLSocket, upstream: ssl.SSLSocket) -> None:
        self.client = client
        self.upstream = upstream
        self.from_client = client.makefile("rb")
        self.from_server = upstream.makefile("rb")
        self.counter = 0

    # -- reading whole units -----------------------------------------------------------

    def server_unit(self) -> bytes:
        """One response from Dovecot, literals included."""
        unit = b""
        while True:
            line = self.from_server.readline()
            if not line:
                raise EOFError("dovecot closed the connection")
            unit += line
            match = _LITERAL.search(line)
            if not match:
                return unit
            unit += self.from_server.read(int(match.group(1)))

    def client_line(self) -> tuple[bytes, int | None]:
        """One command line from the client: non-synchronising literals read along, or
        stopped at a synchronising one (its size returned, sent after a continuation)."""
        unit = b""
        while True:
            line = self.from_client.readline()
            if not line:
                return unit, None
            unit += line
            match = _LITERAL.search(line)
            if not match:
                return unit, None
            if not match.group(2):
                return unit, int(match.group(1))
            unit += self.from_client.read(int(match.group(1)))

    def to_client(self, data: bytes) -> None:
        if b"CAPABILITY" in data:
            data = _outside_literals(data, _announce)
        self.client.sendall(data)

    def to_server(self, data: bytes) -> None:
        self.upstream.sendall(data)

    # -- relaying ----------------------------------------------------------------------

    def run(self) -> None:
        self.to_client(self.server_unit())  # the greeting
        while True:
            line, pending = self.client_line()
            if not line:
                return
            tag = line.split(b" ", 1)[0]
            if pending is None and self.special(line):
                continue
            self.to_server(line)
            self.relay(tag, pending)
            if line.split()[1:2] == [b"LOGOUT"]:
                return

    def relay(self, tag: bytes, pending: int | None,
              rewrite: Any = None) -> bytes:
        """Pass Dovecot's answers to the client until ``tag`` completes; feed continuations."""
        while True:
            unit = self.server_unit()
            if unit.startswith(b"+"):
                self.to_client(unit)
                if pending is not None:
                    data = self.from_client.read(pending)
                    rest, pending = self.client_line()
                    self.to_server(data + rest)
                else:
                    line, pending = self.client_line()
                    self.to_server(line)
                continue
            if unit.startswith(tag + b" "):
                self.to_client(unit)
                return unit
            self.to_client(rewrite(unit) if rewrite else _hide_keywords(unit))

    def side(self, command: bytes) -> list[bytes]:
        """Run a command of the proxy's own; its untagged answers, the rest passed on."""
        self.counter += 1
        tag = b"GMSI%d" % self.counter
        self.to_server(tag + b" " + command + b"\r\n")
        answers = []
        while True:
            unit = self.server_unit()
            if unit.startswith(tag + b" "):
                return answers
            if re.match(rb"^\* \d+ FETCH ", unit) or unit.startswith(b"* LIST"):
                answers.append(unit)
            else:
                self.to_client(_hide_keywords(unit))

    def infos(self, uid: bool, id_set: bytes) -> dict[int, _Info]:
        """seq -> what the proxy knows about the message, for the messages of ``id_set``."""
        prefix = b"UID FETCH " if uid else b"FETCH "
        found = {}
        for unit in self.side(prefix + id_set + b" (UID FLAGS " + _THREAD_HEADERS + b")"):
            seq = int(re.match(rb"^\* (\d+) FETCH", unit).group(1))  # type: ignore[union-attr]
            uid_match = re.search(rb"UID (\d+)", unit)
            flags = _FLAGS.search(unit)
            literal = _LITERAL.search(unit.split(b"\r\n", 1)[0] + b"\r\n")
            headers = b""
            if literal:
                start = unit.index(b"\r\n") + 2
                headers = unit[start:start + int(literal.group(1))]
            found[seq] = _Info(int(uid_match.group(1)) if uid_match else seq,
                               flags.group(1).split() if flags else [], headers)
        return found

    # -- the X-GM-* commands -----------------------------------------------------------

    def special(self, line: bytes) -> bool:
        fetch = _FETCH_CMD.match(line)
        if fetch and any(item in fetch.group(4).upper() for item in _GM_ITEMS):
            self.fetch(*fetch.groups())
            return True
        store = _STORE_CMD.match(line)
        if store:
            self.store(*store.groups())
            return True
        thread = _THRID_SEARCH.match(line)
        if thread:
            self.thread_search(*thread.groups())
            return True
        raw = _RAW_SEARCH.match(line)
        if raw:
            tag, uid, before, query, after = raw.groups()
            if query.startswith(b'"'):
                query = re.sub(rb"\\(.)", rb"\1", query[1:-1])
            criteria = _translate(query.decode())
            self.to_server(tag + b" " + (uid or b"") + b"SEARCH " + before + criteria + after
                           + b"\r\n")
            self.relay(tag, None)
            return True
        return False

    def fetch(self, tag: bytes, uid: bytes | None, id_set: bytes, items: bytes) -> None:
        words = items.split()
        wanted = [w.upper() for w in words if w.upper() in _GM_ITEMS]
        kept = b" ".join(w for w in words if w.upper() not in _GM_ITEMS) or b"UID"
        infos = self.infos(bool(uid), id_set)

        def add(unit: bytes) -> bytes:
            match = re.match(rb"^\* (\d+) FETCH \(", unit)
            if not match or int(match.group(1)) not in infos:
                return _hide_keywords(unit)
            extra = infos[int(match.group(1))].items(wanted)
            return _hide_keywords(unit[:match.end()] + extra + b" " + unit[match.end():])

        self.to_server(tag + b" " + (uid or b"") + b"FETCH " + id_set + b" (" + kept + b")\r\n")
        self.relay(tag, None, rewrite=add)

    def store(self, tag: bytes, uid: bytes | None, id_set: bytes, sign: bytes,
              silent: bytes | None, raw_labels: bytes) -> None:
        labels = [utf7_decode(item) for item in _strings(raw_labels)]
        if sign != b"-":
            for label in labels:  # an existing one is refused, which changes nothing
                if not label.startswith("\\"):
                    self.side(b"CREATE " + _quote(utf7_encode(label)))
        keywords = b" ".join(label_keyword(label) for label in labels)
        command = (tag + b" " + (uid or b"") + b"STORE " + id_set + b" " + sign + b"FLAGS"
                   + (silent or b"") + b" (" + keywords + b")\r\n")

        def as_labels(unit: bytes) -> bytes:
            flags = _FLAGS.search(unit)
            if not flags or not re.match(rb"^\* \d+ FETCH", unit):
                return _hide_keywords(unit)
            names = [bytes.fromhex(m.group(1).decode()).decode("utf-8")
                     for f in flags.group(1).split() if (m := _KEYWORD.match(f))]
            listed = b" ".join(_quote(utf7_encode(name)) for name in names)
            return unit[:flags.start()] + b"X-GM-LABELS (" + listed + b")" + unit[flags.end():]

        self.to_server(command)
        self.relay(tag, None, rewrite=as_labels)

    def thread_search(self, tag: bytes, uid: bytes | None, thread: bytes) -> None:
        infos = self.infos(True, b"1:*")
        wanted = int(thread)
        found = sorted(info.uid if uid else seq for seq, info in infos.items()
                       if info.thread == wanted)
        self.to_client(b"* SEARCH" + b"".join(b" %d" % n for n in found) + b"\r\n")
        self.to_client(tag + b" OK Search completed (Gmail stand-in).\r\n")


def _announce(unit: bytes) -> bytes:
    """Add X-GM-EXT-1 to every capability list in ``unit``."""
    return re.sub(rb"(\[CAPABILITY |^\* CAPABILITY )(?!.*X-GM-EXT-1)", rb"\1X-GM-EXT-1 ", unit,
                  count=1)


def _outside_literals(unit: bytes, change: Any) -> bytes:
    """``unit`` with ``change`` applied to each line of protocol text, never to literals."""
    out = b""
    while unit:
        end = unit.find(b"\r\n")
        line, unit = (unit, b"") if end < 0 else (unit[:end + 2], unit[end + 2:])
        out += change(line)
        match = _LITERAL.search(line)
        if match:
            size = int(match.group(1))
            out += unit[:size]
            unit = unit[size:]
    return out


def _hide_keywords(unit: bytes) -> bytes:
    """Labels are not flags on Gmail: drop the label keywords from every flag list."""
    if b"gl_" not in unit:
        return unit

    def hide(line: bytes) -> bytes:
        return re.sub(rb"(FLAGS \()([^)]*)\)", lambda m: m.group(1) + b" ".join(
            f for f in m.group(2).split() if not _KEYWORD.match(f)) + b")", line)

    return _outside_literals(unit, hide)


def _translate(query: str) -> bytes:
    """The few Gmail search operators the tests use, as IMAP SEARCH criteria."""
    terms = []
    for word in query.split():
        key, _, value = word.partition(":")
        if key == "from" and value:
            terms.append(b"FROM " + _quote(value.encode()))
        elif key == "subject" and value:
            terms.append(b"SUBJECT " + _quote(value.encode()))
        elif key == "label" and value:
            terms.append(b"KEYWORD " + label_keyword(value))
        elif word == "is:unread":
            terms.append(b"UNSEEN")
        elif word == "is:starred":
            terms.append(b"FLAGGED")
        else:
            terms.append(b"TEXT " + _quote(word.encode()))
    return b" ".join(terms) or b"ALL"


class GmailStandIn:
    """The proxy, listening on 127.0.0.1 with TLS; ``env()`` points janito-gmail at it."""

    def __init__(self, dovecot: Any, cert: Path, key: Path) -> None:
        self.dovecot = dovecot
        self.server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.server_context.load_cert_chain(str(cert), str(key))
        self.client_context = ssl.create_default_context(cafile=str(dovecot.cert))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def env(self, **options: Any) -> dict[str, str]:
        values = dict(self.dovecot.env(**options))
        values["JANITO_GMAIL_IMAP_PORT"] = str(self.port)
        return values

    def client(self, user: str | None = None) -> Any:
        """A logged-in IMAPClient through the stand-in (for seeding and checking)."""
        import _gmail_servers as servers
        from imapclient import IMAPClient

        user = user or servers.USER
        client = IMAPClient("127.0.0.1", port=self.port, ssl=True,
                            ssl_context=self.client_context, timeout=10)
        client.login(user, self.dovecot.users[user])
        return client

    def stop(self) -> None:
        self.stopped = True
        self.listener.close()
        with self.lock:
            for connection in self.connections:
                try:
                    connection.close()
                except OSError:
                    pass

    def _accept(self) -> None:
        while not self.stopped:
            try:
                raw, _address = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        client = upstream = None
        try:
            client = self.server_context.wrap_socket(raw, server_side=True)
            upstream = self.client_context.wrap_socket(
                socket.create_connection(("127.0.0.1", self.dovecot.port), timeout=30),
                server_hostname="127.0.0.1")
            with self.lock:
                self.connections += [client, upstream]
            _Session(client, upstream).run()
        except (OSError, EOFError, ValueError):
            pass
        finally:
            for connection in (client, upstream, raw):
                if connection is not None:
                    try:
                        connection.close()
                    except OSError:
                        pass
