"""Keeping secret values out of what janito shows: results, reports, errors and logs.

A secret rarely leaves in its own clothes only. A server that quotes it in JSON escapes
``"``, ``\\`` and non-ASCII characters; an HTTP client sends it in base64 (Basic, SASL
``AUTH PLAIN``, standard or URL-safe, padded or not, alone or inside a larger payload);
mail carries it in base64 wrapped at 76 columns; a URL carries it percent-encoded, once
or twice; a debug dump shows it in hex or base32; Python's ``repr`` escapes it its own
way. :class:`Scrubber` holds the secret values of one context and every such form of
each, and replaces any of them with :data:`REDACTED` in text, bytes and JSON-like data
at any depth (keys included). :class:`ScrubFilter` does the same to log records: the
formatted message, and the exception and stack text.

Every janito distribution uses these; a toolset that handles credentials registers the
values it knows (``Scrubber.add``) and passes what it shows through the scrubber.
"""

from __future__ import annotations

import logging
import re
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
    string); Python's ``repr`` escaping; percent-encoded (``quote`` with and without ``/``
    kept, ``quote_plus``, JavaScript's ``encodeURIComponent`` and ``encodeURI``, and every
    byte as ``%XX``), each with upper or lower case hex digits, and each of those
    percent-encoded again (``%25XX``); and the forms of :func:`wrappable_forms`.
    """
    return _forms(secret)[0]


def wrappable_forms(secret: str) -> set[str]:
    """The forms of ``secret`` that a writer may break across lines (MIME wraps base64 at
    76 columns, PEM at 64, a hex dump wherever it likes).

    Hex, lower and upper case; base64 and URL-safe base64, with and without padding;
    base32, upper and lower case, with and without padding. For base64 and base32 also
    the part of the encoding that any larger payload holding the secret has whatever bytes
    surround it, at each offset within a group.
    """
    return _forms(secret)[1]


def _forms(secret: str) -> tuple[set[str], set[str], set[str]]:
    """(every form, the wrappable ones, those whose letters come in either case: hex,
    base32 and percent-encoding), each at least MIN_LENGTH long."""
    import base64
    import json
    from urllib.parse import quote, quote_plus

    if len(secret) < MIN_LENGTH:
        return set(), set(), set()
    forms = {secret}
    for ascii_only in (True, False):
        escaped = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        forms.add(escaped)
        forms.add(json.dumps(escaped, ensure_ascii=ascii_only)[1:-1])
    forms.add(repr(secret)[1:-1])
    raw = secret.encode("utf-8", "surrogatepass")
    percent = {quote(secret, safe=""), quote(secret), quote_plus(secret),
               quote(secret, safe="!'()*"), quote(secret, safe="!#$&'()*+,/:;=?@"),
               "".join(f"%{byte:02X}" for byte in raw)}
    percent.update([_lower_escapes(form) for form in percent])
    # a URL carried inside another URL's query escapes the "%" of each escape once more
    percent.update([quote(form, safe="") for form in percent])
    hexed = raw.hex()
    wrappable = {hexed, hexed.upper()}
    caseless = percent | wrappable
    # (encoder, bits per character, bytes per group of characters, lower case in use too)
    for encode, bits, group, lower in ((base64.b64encode, 6, 3, False),
                                       (base64.urlsafe_b64encode, 6, 3, False),
                                       (base64.b32encode, 5, 5, True)):
        whole = encode(raw).decode("ascii")
        found = {whole, whole.rstrip("=")}
        # A secret inside a payload starts at one of ``group`` offsets within a group.
        # The characters whose bits all come from the secret are the same whatever the
        # payload holds around it; the one before and the one after also carry bits of
        # their neighbours, and are left.
        for offset in range(group):
            shifted = encode(bytes(offset) + raw).decode("ascii")
            core = shifted[-(-8 * offset // bits): 8 * (offset + len(raw)) // bits]
            if len(core) >= 8:  # a shorter one stands for too few bytes to be told apart
                found.add(core)
        if lower:
            found.update([form.lower() for form in found])
            caseless.update(found)
        wrappable.update(found)
    forms.update(percent, wrappable)
    return tuple({form for form in group if len(form) >= MIN_LENGTH}  # type: ignore[return-value]
                 for group in (forms, wrappable, caseless))


def _lower_escapes(text: str) -> str:
    """``text`` with the hex digits of each ``%XX`` escape in lower case."""
    parts = text.split("%")
    return parts[0] + "".join("%" + part[:2].lower() + part[2:] for part in parts[1:])


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
        # value -> (its forms, the wrappable ones, the caseless ones), insertion-ordered
        # so that the oldest go first past capacity
        self._secrets: dict[str, tuple[frozenset[str], ...]] = {}
        # (every form, the forms that are not wrappable, the wrappable ones); None until
        # the next use after a change. Replaced whole, so a reader without the lock sees
        # one consistent set.
        self._matchers: tuple[_Matcher, _Matcher, _Matcher] | None = None
        #: Counts the changes of the set of values: what was scrubbed with an older
        #: generation may hold a value added since.
        self.generation = 0
        self.add(*secrets)

    def add(self, *secrets: object) -> None:
        """Remember each value that is a string of at least MIN_LENGTH characters."""
        fresh = {secret: tuple(map(frozenset, _forms(secret))) for secret in secrets
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
            self._matchers = None
            self.generation += 1

    def __len__(self) -> int:
        return len(self._secrets)

    def __bool__(self) -> bool:
        return bool(self._secrets) or bool(self.patterns)

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._secrets))

    def _current(self) -> tuple[_Matcher, _Matcher, _Matcher]:
        """Matchers of (every form, the forms that are not wrappable, the wrappable ones)."""
        matchers = self._matchers
        if matchers is None:
            with self._lock:
                matchers = self._matchers
                if matchers is None:
                    found: set[str] = set()
                    wrapped: set[str] = set()
                    caseless: set[str] = set()
                    for forms, wrappable, either_case in self._secrets.values():
                        found.update(forms)
                        wrapped.update(wrappable)
                        caseless.update(either_case)
                    matchers = self._matchers = (
                        _Matcher(found, caseless), _Matcher(found - wrapped, caseless),
                        _Matcher(wrapped, caseless))
        return matchers

    def forms(self) -> tuple[str, ...]:
        """Every form of every value, longest first."""
        return self._current()[0].forms

    def text(self, value: object) -> str:
        """``str(value)`` (bytes decoded as UTF-8) with every form of every value replaced."""
        if isinstance(value, (bytes, bytearray)):
            text = bytes(value).decode("utf-8", "replace")
        else:
            text = value if isinstance(value, str) else str(value)
        every, plain, wrapped = self._current()
        if "\n" not in text and "\\n" not in text:  # no line break, real or JSON-escaped
            text = every.replace(text)
        else:
            # the forms a break may cut are looked for with the breaks taken out
            text = _unwrapped_replace(plain.replace(text), wrapped)
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

    def __init__(self, forms: Iterable[str], caseless: Iterable[str] = ()) -> None:
        # Longest first, so a longer form is never cut by a shorter one it contains.
        self.forms = tuple(sorted(set(forms), key=len, reverse=True))
        self.index: dict[str, list[str]] | None = None
        if len(self.forms) > self.FEW:
            self.index = {}
            for form in self.forms:
                self.index.setdefault(form[:MIN_LENGTH], []).append(form)
        # Most texts hold no secret, and telling so is most of the work. It needs only the
        # forms that hold no other form (a padded base64 holds its core), the forms of
        # hex, base32 and percent-encoding once, in lower case, in the text in lower case
        # (their ASCII letters lower one for one, so none is missed), and those with a
        # "%" only where a "%" is.
        either = set(caseless)
        self.probes = _probes(form for form in self.forms if form not in either)
        lowered = _probes(form.lower() for form in self.forms if form in either)
        self.lowered = tuple(probe for probe in lowered if "%" not in probe)
        self.lowered_escaped = tuple(probe for probe in lowered if "%" in probe)

    def occurs_in(self, text: str) -> bool:
        """Whether some form occurs in ``text`` (perhaps, for a text that folds oddly in
        lower case: the callers then look for each form as it is)."""
        if self.index is not None:
            return bool(self.spans(text))
        for probe in self.probes:
            if probe in text:
                return True
        escaped = self.lowered_escaped if "%" in text else ()
        if self.lowered or escaped:
            folded = text.lower()
            for probe in (*self.lowered, *escaped):
                if probe in folded:
                    return True
        return False

    def replace(self, text: str) -> str:
        if self.index is None:
            if not self.occurs_in(text):
                return text
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

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the forms occur in ``text``: sorted (start, end) pairs, overlapping ones
        merged (what is redacted then is their union, never less)."""
        found: list[tuple[int, int]] = []
        if self.index is None:
            for form in self.forms:
                at = text.find(form)
                while at >= 0:
                    found.append((at, at + len(form)))
                    at = text.find(form, at + len(form))
        else:
            index = self.index
            for at in range(len(text) - MIN_LENGTH + 1):
                for form in index.get(text[at:at + MIN_LENGTH], ()):
                    if text.startswith(form, at):
                        found.append((at, at + len(form)))
                        break  # the bucket is longest first
        found.sort()
        merged: list[tuple[int, int]] = []
        for start, end in found:
            if merged and start <= merged[-1][1]:
                if end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        return merged



def _probes(forms: Iterable[str]) -> tuple[str, ...]:
    """The forms that hold none of the others (any text holding a form holds one of them)."""
    kept: list[str] = []
    for form in sorted(set(forms), key=len):
        if not any(probe in form for probe in kept):
            kept.append(form)
    return tuple(kept)


#: A line break between two characters of base64, base32 or hex: the way MIME, PEM and
#: hex dumps wrap an encoding, as it is or JSON-escaped.
_BREAK = re.compile(r"(?<=[0-9A-Za-z+/=_-])(?:\r?\n|\\r\\n|\\n)(?=[0-9A-Za-z+/=_-])")


def _unwrapped_replace(text: str, matcher: _Matcher) -> str:
    """``text`` with every form of ``matcher`` replaced, also where line breaks cut one.

    The text is read with such breaks taken out; only when a form is found that way are
    its places worked back to the text (the breaks inside a form go with it).
    """
    if not matcher.forms:
        return text
    if "\\n" in text:
        # A backslash before an "n" may be no escaped break (a Windows path before a
        # form that starts with "n"): the forms as they stand are taken out first.
        text = matcher.replace(text)
        joined = _BREAK.sub("", text)
    else:
        # Taking every line break out keeps every form the breaks _BREAK finds would (a
        # form holds no line break, so only breaks between its characters are found
        # within it), and is many times quicker.
        joined = text.replace("\r\n", "") if "\r" in text else text
        joined = joined.replace("\n", "")
    if not matcher.occurs_in(joined):
        return text
    from bisect import bisect_right

    joined = _BREAK.sub("", text)

    # where each piece kept between two breaks starts, in ``joined`` and in ``text``
    in_joined = [0]
    in_text = [0]
    removed = 0
    for found in _BREAK.finditer(text):
        removed += found.end() - found.start()
        in_text.append(found.end())
        in_joined.append(found.end() - removed)

    def place(at: int) -> int:
        piece = bisect_right(in_joined, at) - 1
        return at + in_text[piece] - in_joined[piece]

    pieces: list[str] = []
    kept = 0
    for start, end in matcher.spans(joined):
        first, last = place(start), place(end - 1) + 1
        pieces.append(text[kept:first])
        pieces.append(REDACTED)
        kept = last
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
