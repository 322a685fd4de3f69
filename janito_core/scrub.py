"""Keeping secret values out of what janito shows: results, reports, errors and logs.

A secret rarely leaves in its own clothes only. A server that quotes it in JSON escapes
``"``, ``\\`` and non-ASCII characters; an HTTP client sends it in base64 (Basic, SASL
``AUTH PLAIN``, standard or URL-safe, padded or not, alone or inside a larger payload);
a URL carries it percent-encoded; Python's ``repr`` escapes it its own way.
:class:`Scrubber` holds the secret values of one context and every such form of each,
and replaces any of them with :data:`REDACTED` in text, bytes and JSON-like data at any
depth (keys included). :class:`ScrubFilter` does the same to log records: the formatted
message, and the exception and stack text.

Every janito distribution uses these; a toolset that handles credentials registers the
values it knows (``Scrubber.add``) and passes what it shows through the scrubber.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Union

REDACTED = "[redacted]"
#: Shorter values are not scrubbed: replacing them would garble ordinary text, and a
#: secret that short hides nothing anyway. Forms shorter than this are skipped too.
MIN_LENGTH = 4

Pattern = tuple[Any, Union[str, Callable[[Any], str]]]
"""A compiled regular expression and its replacement (``re.sub`` rules)."""


def secret_forms(secret: str) -> set[str]:
    """``secret`` and the transformed forms it may show up in (all at least MIN_LENGTH long).

    As it is; JSON-escaped (ASCII-only and not, and escaped twice, for JSON inside a JSON
    string); Python's ``repr`` escaping; base64 and URL-safe base64, with and without
    padding, and the part of either that any larger payload containing the secret
    encodes to whatever bytes surround it; percent-encoded (``quote`` with and without
    ``/`` kept, and ``quote_plus``).
    """
    import base64
    import json
    from urllib.parse import quote, quote_plus

    if len(secret) < MIN_LENGTH:
        return set()
    forms = {secret}
    for ascii_only in (True, False):
        escaped = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        forms.add(escaped)
        forms.add(json.dumps(escaped, ensure_ascii=ascii_only)[1:-1])
    forms.add(repr(secret)[1:-1])
    forms.update((quote(secret, safe=""), quote(secret), quote_plus(secret)))
    raw = secret.encode("utf-8", "surrogatepass")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms.update((whole, whole.rstrip("=")))
        for offset in (0, 1, 2):
            # With ``offset`` bytes before it, the secret's bytes fill whole 3-byte groups
            # from the next group on; those groups encode to the same characters whatever
            # the payload around them.
            size = offset + len(raw)
            shifted = encode(bytes(offset) + raw).decode("ascii")
            core = shifted[4 if offset else 0: 4 * (size // 3)]
            if len(core) >= 8:  # a shorter one stands for too few bytes to be told apart
                forms.add(core)
    return {form for form in forms if len(form) >= MIN_LENGTH}


class Scrubber:
    """A set of secret values, and what replaces them wherever they appear.

    ``patterns`` add shapes to remove even when the value is unknown (a toolset's token
    formats), applied after the known values. ``capacity`` bounds how many values are
    kept: past it, the oldest added go first. Safe to share between threads.
    """

    def __init__(self, secrets: Iterable[str] = (), *, patterns: Sequence[Pattern] = (),
                 capacity: int | None = None) -> None:
        self.patterns = tuple(patterns)
        self.capacity = capacity
        self._lock = threading.Lock()
        # value -> its forms, insertion-ordered so that the oldest go first past capacity
        self._secrets: dict[str, frozenset[str]] = {}
        self._matcher: _Matcher | None = _Matcher(())
        self.add(*secrets)

    def add(self, *secrets: object) -> None:
        """Remember each value that is a string of at least MIN_LENGTH characters."""
        fresh = {secret: frozenset(secret_forms(secret)) for secret in secrets
                 if isinstance(secret, str) and len(secret) >= MIN_LENGTH}
        if not fresh:
            return
        with self._lock:
            for secret, forms in fresh.items():
                self._secrets.pop(secret, None)
                self._secrets[secret] = forms
            if self.capacity is not None:
                while len(self._secrets) > self.capacity:
                    del self._secrets[next(iter(self._secrets))]
            self._matcher = None

    def __len__(self) -> int:
        return len(self._secrets)

    def __bool__(self) -> bool:
        return bool(self._secrets) or bool(self.patterns)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._secrets))

    def _current(self) -> _Matcher:
        matcher = self._matcher
        if matcher is None:
            with self._lock:
                matcher = self._matcher
                if matcher is None:
                    found: set[str] = set()
                    for forms in self._secrets.values():
                        found.update(forms)
                    matcher = self._matcher = _Matcher(found)
        return matcher

    def forms(self) -> tuple[str, ...]:
        """Every form of every value, longest first."""
        return self._current().forms

    def text(self, value: object) -> str:
        """``str(value)`` (bytes decoded as UTF-8) with every form of every value replaced."""
        if isinstance(value, (bytes, bytearray)):
            text = bytes(value).decode("utf-8", "replace")
        else:
            text = value if isinstance(value, str) else str(value)
        text = self._current().replace(text)
        for pattern, replacement in self.patterns:
            text = pattern.sub(replacement, text)
        return text

    def value(self, data: Any) -> Any:
        """``data`` (a result, a schema: JSON-like) with :meth:`text` applied to every string
        in it, keys included; tuples become lists, bytes text, anything else is kept."""
        if not self:
            return data
        if isinstance(data, (str, bytes, bytearray)):
            return self.text(data)
        if isinstance(data, dict):
            return {self.value(k) if isinstance(k, str) else k: self.value(v)
                    for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(item) for item in data]
        return data

    __call__ = value


class _Matcher:
    """Replaces a fixed set of forms. A few forms are looked for one by one (each search
    runs in C); many (a toolset that remembers every token it sees) are found in one pass
    over the text through an index of their first characters, so the cost stops growing
    with their number."""

    FEW = 256

    def __init__(self, forms: Iterable[str]) -> None:
        # Longest first, so a longer form is never cut by a shorter one it contains.
        self.forms = tuple(sorted(set(forms), key=len, reverse=True))
        self.index: dict[str, list[str]] | None = None
        if len(self.forms) > self.FEW:
            self.index = {}
            for form in self.forms:
                self.index.setdefault(form[:MIN_LENGTH], []).append(form)

    def replace(self, text: str) -> str:
        if self.index is None:
            for form in self.forms:
                if form in text:
                    text = text.replace(form, REDACTED)
            return text
        index = self.index
        pieces: list[str] = []
        kept = at = 0
        end = len(text) - MIN_LENGTH
        while at <= end:
            bucket = index.get(text[at:at + MIN_LENGTH])
            if bucket is not None:
                for form in bucket:
                    if text.startswith(form, at):
                        pieces.append(text[kept:at])
                        pieces.append(REDACTED)
                        at = kept = at + len(form)
                        break
                else:
                    at += 1
            else:
                at += 1
        if not pieces:
            return text
        pieces.append(text[kept:])
        return "".join(pieces)


def scrub(data: Any, secrets: Iterable[str]) -> Any:
    """``data`` with every form of each of ``secrets`` replaced (see :meth:`Scrubber.value`)."""
    return Scrubber(secrets).value(data)


ScrubberSource = Union[Scrubber, Callable[[], Union[Scrubber, Iterable[str], None]]]


class ScrubFilter(logging.Filter):
    """A logging filter that cleans each record before any handler sees it.

    ``source`` is a :class:`Scrubber`, or a callable giving the scrubber (or the secret
    values) in force when the record is made. The message is formatted here (its
    arguments applied), cleaned and kept without arguments; the exception text is
    formatted and cleaned too, and when it held a secret the exception object is dropped
    from the record (it still holds the value); stack text is cleaned. Records are never
    suppressed.

    A filter on a logger sees only the records made on that logger, not those its
    children pass up: :meth:`install` puts it on loggers and their existing children.
    """

    def __init__(self, source: ScrubberSource) -> None:
        super().__init__()
        self.source = source

    def _scrubber(self) -> Scrubber | None:
        found = self.source() if callable(self.source) and not isinstance(self.source, Scrubber) \
            else self.source
        if found is None or isinstance(found, Scrubber):
            return found
        return Scrubber(found)

    def filter(self, record: logging.LogRecord) -> bool:
        scrubber = self._scrubber()
        if not scrubber:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a handler would print the raw message and its arguments
            message = f"{record.msg} {record.args!r}"
        record.msg = scrubber.text(message)
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            cleaned = scrubber.text(record.exc_text)
            if cleaned != record.exc_text:
                record.exc_text = cleaned
                record.exc_info = None
        if record.stack_info:
            record.stack_info = scrubber.text(record.stack_info)
        return True

    def install(self, names: Iterable[str], prefixes: Iterable[str] = ()) -> None:
        """Put this filter on the loggers ``names`` and on every existing logger whose name
        starts with one of ``prefixes`` (idempotent)."""
        wanted = set(names)
        starts = tuple(prefixes)
        if starts:
            wanted.update(name for name in list(logging.Logger.manager.loggerDict)
                          if name.startswith(starts))
        for name in wanted:
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)
