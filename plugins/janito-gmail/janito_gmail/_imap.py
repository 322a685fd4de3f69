"""One IMAP connection per tool call, and the selection, search and fetch helpers.

Every IMAP exchange goes through imapclient; round trips stay constant in the number
of messages: one SEARCH, then FETCH commands that each cover every selected message.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from janito_core.scrub import ScrubFilter

from . import _mime
from ._errors import (
    FOLDER_NOT_FOUND,
    INVALID_ARGUMENTS,
    NOT_FOUND,
    UNSUPPORTED,
    MailError,
    classify,
    invalid,
    oauth_refused,
)
from ._params import BREAK
from ._settings import Settings

GMAIL_CAPABILITY = "X-GM-EXT-1"
SEEN = b"\\Seen"
FLAGGED = b"\\Flagged"
DELETED = b"\\Deleted"
SPECIAL_USE = ("\\All", "\\Archive", "\\Drafts", "\\Flagged", "\\Junk", "\\Sent", "\\Trash",
               "\\Important")
PREVIEW_LIMIT = 50

# -- keeping secrets out of imapclient's debug log ------------------------------------

class _OpenSessionSecrets:
    """The secrets of the IMAP sessions open now, each counted once per session holding it.

    Sessions may overlap (tool calls in threads): one ending must not unmask the secrets
    of another still open.
    """

    def __init__(self) -> None:
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def current(self) -> list[str]:
        with self._lock:
            return list(self._held)

    @contextmanager
    def holding(self, secrets: Sequence[str]) -> Iterator[None]:
        with self._lock:
            for secret in secrets:
                self._held[secret] = self._held.get(secret, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                for secret in secrets:
                    left = self._held.get(secret, 1) - 1
                    if left > 0:
                        self._held[secret] = left
                    else:
                        self._held.pop(secret, None)


OPEN_SESSION_SECRETS = _OpenSessionSecrets()


_FILTER = ScrubFilter(OPEN_SESSION_SECRETS.current)
_FILTER.install(("imapclient", "imapclient.imapclient", "imapclient.imaplib"))


# -- the connection -----------------------------------------------------------------


@dataclass
class Mailbox:
    """A logged-in connection and what the server can do."""

    client: Any
    settings: Settings

    @property
    def server(self) -> str:
        return f"{self.settings.imap_host}:{self.settings.imap_port}"

    @property
    def gmail(self) -> bool:
        """Whether the server speaks Gmail's extensions (X-GM-RAW, labels)."""
        return bool(self.client.has_capability(GMAIL_CAPABILITY))

    def has(self, capability: str) -> bool:
        return bool(self.client.has_capability(capability))

    # -- folders ---------------------------------------------------------------------

    def folders(self) -> list[dict[str, Any]]:
        rows = []
        for flags, delimiter, name in self.client.list_folders():
            flag_names = [_mime.text(f) for f in flags]
            special = next((f[1:].lower() for f in flag_names if f in SPECIAL_USE), None)
            rows.append({
                "name": name,
                "delimiter": _mime.text(delimiter) or None,
                "flags": flag_names,
                "special_use": special,
                "selectable": not any(f.lower() in ("\\noselect", "\\nonexistent")
                                      for f in flag_names),
            })
        return rows

    def require_folder(self, folder: str, *, field: str = "folder") -> None:
        """MailError(folder_not_found) unless ``folder`` exists (one LIST)."""
        _one_line(folder, field)
        if not self.client.folder_exists(folder):
            raise self._no_folder(folder)

    def _no_folder(self, folder: str) -> MailError:
        import difflib

        try:
            names = [row["name"] for row in self.folders()]
        except Exception:
            names = []
        close = difflib.get_close_matches(folder, names, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else \
            "; ListFolders shows the folders there are"
        return MailError(FOLDER_NOT_FOUND, f"there is no folder {folder!r}{hint}",
                         folder=folder, suggestions=close)

    def select(self, folder: str, *, readonly: bool, field: str = "folder") -> dict[Any, Any]:
        """SELECT (or EXAMINE) ``folder``; an unknown folder is folder_not_found."""
        from imapclient.exceptions import IMAPClientError

        _one_line(folder, field)
        try:
            return dict(self.client.select_folder(folder, readonly=readonly))
        except IMAPClientError as exc:
            if not self.client.folder_exists(folder):
                raise self._no_folder(folder) from None
            raise classify(exc, server=self.server) from None

    def special_folder(self, use: str, guesses: tuple[str, ...] = ()) -> str | None:
        """The folder with special use ``use`` ("trash", "drafts", "sent", "all", ...),
        else the first of ``guesses`` (lower-cased names) that exists, else None."""
        rows = self.folders()
        for row in rows:
            if row["special_use"] == use and row["selectable"]:
                return str(row["name"])
        lowered = {str(row["name"]).lower(): str(row["name"]) for row in rows}
        for guess in guesses:
            if guess in lowered:
                return lowered[guess]
        return None

    def trash_folder(self) -> str | None:
        """The folder used as Trash: the setting, the \\Trash special-use folder, a name."""
        if self.settings.trash_folder:
            return self.settings.trash_folder
        return self.special_folder("trash", (
            "[gmail]/trash", "[google mail]/trash", "trash", "inbox.trash", "inbox/trash",
            "deleted items", "deleted messages"))

    # -- searching -------------------------------------------------------------------

    def search(self, selection: Selection) -> list[int]:
        """UIDs matching ``selection`` in the selected folder, in ascending order (pages
        of the newest messages without criteria are found by ``_reading.page``)."""
        criteria = selection.criteria(gmail=self.gmail)
        if not criteria:
            criteria = [("ALL",)]
        flat: list[Any] = [item for term in criteria for item in term]
        if any(isinstance(i, str) and not i.isascii() for i in flat):
            # imapclient sends 8-bit strings as literals, announced by CHARSET UTF-8
            found = self.client.search(flat, charset="UTF-8")
        else:
            found = self.client.search(" ".join(_render(term) for term in criteria))
        return sorted(int(u) for u in found)

    def resolve(self, selection: Selection) -> tuple[list[int], list[int]]:
        """(matching UIDs, ids asked for that are not in the folder)."""
        uids = self.search(selection)
        missing = sorted(set(selection.ids or ()) - set(uids)) if selection.ids else []
        if selection.ids and not uids and not selection.has_filters():
            raise MailError(
                NOT_FOUND,
                f"no message with id {_id_text(missing)} is in this folder; ReadEmails lists "
                "the ids there are",
                missing_ids=missing,
            )
        return uids, missing

    # -- fetching --------------------------------------------------------------------

    def summaries(self, uids: Sequence[int]) -> list[dict[str, Any]]:
        """id, from, subject, date of each message, in one FETCH (for dry runs)."""
        if not uids:
            return []
        fields = "BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE)]"
        data = self.client.fetch(list(uids), ["FLAGS", "INTERNALDATE", fields])
        rows = []
        for uid in uids:
            item = data.get(uid)
            if item is None:
                continue
            headers = _mime.parse_headers(section(item, b"BODY[HEADER") or b"")
            rows.append({
                "id": uid,
                "from": _mime.header(headers, "From"),
                "subject": _mime.header(headers, "Subject"),
                "date": _mime.iso_date(_mime.header(headers, "Date"),
                                       item.get(b"INTERNALDATE")),
                "unread": SEEN not in item.get(b"FLAGS", ()),
            })
        return rows

    def expunge_uids(self, uids: Sequence[int]) -> None:
        """Remove exactly ``uids`` for good (flag \\Deleted, then UID EXPUNGE).

        Without UIDPLUS a plain EXPUNGE would also remove any other message already
        flagged \\Deleted, so that case is refused unless there is none.
        """
        if not self.has("UIDPLUS"):
            others = set(self.client.search("DELETED")) - set(uids)
            if others:
                raise MailError(
                    UNSUPPORTED,
                    f"the server lacks UIDPLUS and {len(others)} other message(s) here are "
                    "already flagged deleted; expunging would remove them too, so nothing "
                    "was done",
                )
            self.client.add_flags(list(uids), [DELETED], silent=True)
            self.client.expunge()
            return
        self.client.add_flags(list(uids), [DELETED], silent=True)
        self.client.uid_expunge(list(uids))


def _one_line(folder: str, field: str) -> None:
    # Dovecot answers an unknown folder with its name decoded, line breaks and all, and
    # the rest of that answer then reads as a reply of its own
    if BREAK.search(folder):
        raise invalid(field, "must be a folder name on one line")


def section(item: dict[Any, Any], prefix: bytes) -> bytes | None:
    """The value of the first FETCH item whose key starts with ``prefix``."""
    for key, value in item.items():
        if isinstance(key, bytes) and key.startswith(prefix):
            return value if isinstance(value, bytes) else (b"" if value is None else
                                                           bytes(str(value), "utf-8"))
    return None


def _auth_refused(exc: BaseException) -> bool:
    from imapclient.exceptions import LoginError

    return isinstance(exc, LoginError)


def _open(settings: Settings) -> Any:
    """A connected IMAPClient, TLS set up as the settings say, not yet logged in."""
    from imapclient import IMAPClient

    use_ssl = settings.imap_tls == "ssl"
    context = settings.ssl_context() if settings.imap_tls != "none" else None
    client = IMAPClient(settings.imap_host, port=settings.imap_port, ssl=use_ssl,
                        ssl_context=context, timeout=settings.timeout)
    if settings.imap_tls == "starttls":
        client.starttls(context)
    return client


def _close(client: Any) -> None:
    try:
        client.logout()
    except Exception:
        try:
            client.shutdown()
        except Exception:
            pass


def _logged_in(settings: Settings, server: str) -> Any:
    """Connect and log in; with OAuth, once more with a new token if a cached one is refused.

    Any failure becomes a MailError with a clear ``error_type``.
    """
    token = settings.access_token()  # renewed before anything is sent when about to expire
    while True:
        client = None
        with OPEN_SESSION_SECRETS.holding([token] if token else []):
            try:
                client = _open(settings)
                if token:
                    client.oauth2_login(settings.username, token)
                else:
                    client.login(settings.username, settings.password or "")
                return client
            except MailError:
                if client is not None:
                    _close(client)
                raise
            except Exception as exc:
                if client is not None:
                    _close(client)
                if token and _auth_refused(exc):
                    renewed = settings.renew_access_token()
                    if renewed and renewed != token:
                        token = renewed
                        continue
                    raise oauth_refused(settings, f"the IMAP server {server}",
                                        str(exc).strip() or type(exc).__name__) from None
                raise classify(exc, server=server) from None


@contextmanager
def imap_session(settings: Settings) -> Iterator[Mailbox]:
    """Connect, log in, yield a Mailbox, log out: one connection for one tool call.

    Any failure on the way becomes a MailError with a clear ``error_type``.
    """
    from imapclient.exceptions import IMAPClientError

    server = f"{settings.imap_host}:{settings.imap_port}"
    with OPEN_SESSION_SECRETS.holding(settings.secrets()):
        client = _logged_in(settings, server)
        try:
            yield Mailbox(client, settings)
        except MailError:
            raise
        except (IMAPClientError, OSError, EOFError) as exc:  # the server or the network
            raise classify(exc, server=server) from None
        finally:
            _close(client)


# -- selections ---------------------------------------------------------------------


@dataclass
class Selection:
    """Which messages a call is about: explicit ids and/or search criteria (ANDed)."""

    ids: list[int] | None = None
    query: str | None = None
    sender: str | None = None
    subject: str | None = None
    since: datetime.date | None = None
    before: datetime.date | None = None
    unread_only: bool = False

    @classmethod
    def build(cls, *, ids: list[int] | None = None, query: str | None = None,
              sender: str | None = None, subject: str | None = None, since: str | None = None,
              before: str | None = None, unread_only: bool = False) -> Selection:
        """The selection a call asked for (dispatch has checked each value against the
        parameters' rules in _params)."""
        if ids is not None:
            ids = sorted(set(ids))
        return cls(
            ids=ids,
            query=query.strip() if query and query.strip() else None,
            sender=sender.strip() if sender and sender.strip() else None,
            subject=subject.strip() if subject and subject.strip() else None,
            since=_date("since", since),
            before=_date("before", before),
            unread_only=bool(unread_only),
        )

    def has_filters(self) -> bool:
        return any((self.query, self.sender, self.subject, self.since, self.before,
                    self.unread_only))

    def is_empty(self) -> bool:
        """True when nothing narrows the selection, which would mean every message."""
        return self.ids is None and not self.has_filters()

    def require_criteria(self, action: str) -> None:
        """Refuse a selection that would mean "every message" for a changing action."""
        if self.is_empty():
            raise MailError(
                INVALID_ARGUMENTS,
                f"refusing to {action} every message in the folder: give ids, or search "
                "criteria (query, sender, subject, since, before, unread_only); try "
                "dry_run first",
            )

    def criteria(self, *, gmail: bool) -> list[tuple[Any, ...]]:
        terms: list[tuple[Any, ...]] = []
        if self.ids:
            terms.append(("UID", _id_text(self.ids)))
        if self.query:
            terms.append(("X-GM-RAW", self.query) if gmail else ("TEXT", self.query))
        if self.sender:
            terms.append(("FROM", self.sender))
        if self.subject:
            terms.append(("SUBJECT", self.subject))
        if self.since:
            terms.append(("SINCE", self.since))
        if self.before:
            terms.append(("BEFORE", self.before))
        if self.unread_only:
            terms.append(("UNSEEN",))
        return terms

    def describe(self) -> dict[str, Any]:
        """The selection echoed back in results."""
        out: dict[str, Any] = {}
        if self.ids is not None:
            out["ids"] = self.ids
        for name in ("query", "sender", "subject"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.since:
            out["since"] = self.since.isoformat()
        if self.before:
            out["before"] = self.before.isoformat()
        if self.unread_only:
            out["unread_only"] = True
        return out


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _render(term: tuple[Any, ...]) -> str:
    """One search term as IMAP text: the key, then its value (dates in IMAP form,
    message ids as a sequence set, free text always quoted)."""
    key, *values = term
    out = [str(key)]
    for value in values:
        if isinstance(value, datetime.date):
            out.append(f"{value.day}-{_MONTHS[value.month - 1]}-{value.year}")
        elif key == "UID":
            out.append(str(value))
        else:
            out.append(_quote(str(value)))
    return " ".join(out)


def _date(name: str, value: str | None) -> datetime.date | None:
    if value is None or not value.strip():
        return None
    try:
        return datetime.date.fromisoformat(value.strip()[:10])
    except ValueError:
        raise MailError(INVALID_ARGUMENTS, f"{name} must be a date as YYYY-MM-DD, "
                                           f"not {value[:40]!r}") from None


def _id_text(ids: Sequence[int]) -> str:
    """UIDs as a compact IMAP sequence set: 1:3,7."""
    ordered = sorted(set(ids))
    if not ordered:
        return ""
    ranges = []
    start = prev = ordered[0]
    for uid in ordered[1:]:
        if uid == prev + 1:
            prev = uid
            continue
        ranges.append(f"{start}:{prev}" if prev != start else str(start))
        start = prev = uid
    ranges.append(f"{start}:{prev}" if prev != start else str(start))
    return ",".join(ranges)
