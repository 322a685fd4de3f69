"""The one secret scrubber every distribution uses: values, their transformed forms, logs."""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, quote_plus, unquote_to_bytes

import pytest

from janito_core import BaseTool, Registry, Scrubber, ScrubFilter, tool
from janito_core.dispatch import execute_tool_calls
from janito_core.scrub import MIN_LENGTH, REDACTED, scrub, secret_forms
from janito_core.secrets import get_secret, set_secret

SECRET = 'pa"ss\\wörd/+=?&é 42'


def _transforms(secret: str) -> dict[str, str]:
    """The forms a secret travels in, computed here independently of the module."""
    raw = secret.encode()
    return {
        "as is": secret,
        "JSON": json.dumps(secret)[1:-1],
        "JSON, UTF-8": json.dumps(secret, ensure_ascii=False)[1:-1],
        "JSON twice": json.dumps(json.dumps(secret)[1:-1])[1:-1],
        "repr": repr(secret)[1:-1],
        "base64": base64.b64encode(raw).decode(),
        "base64, no padding": base64.b64encode(raw).decode().rstrip("="),
        "URL-safe base64": base64.urlsafe_b64encode(raw).decode(),
        "URL-safe base64, no padding": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "quote": quote(secret, safe=""),
        "quote, / kept": quote(secret),
        "quote_plus": quote_plus(secret),
        "encodeURIComponent": quote(secret, safe="!'()*"),
        "quote, lower case": re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(),
                                    quote(secret, safe="")),
        "every byte as %XX": "".join(f"%{b:02X}" for b in raw),
        "every byte as %xx": "".join(f"%{b:02x}" for b in raw),
        "percent-encoded twice": quote(quote(secret, safe=""), safe=""),
        "every byte as %XX, twice": "".join(f"%25{b:02X}" for b in raw),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "base32": base64.b32encode(raw).decode(),
        "base32, no padding": base64.b32encode(raw).decode().rstrip("="),
        "base32, lower case": base64.b32encode(raw).decode().lower(),
    }


@pytest.mark.parametrize("form", sorted(_transforms(SECRET)))
def test_every_transformed_form_is_replaced(form: str) -> None:
    shown = _transforms(SECRET)[form]
    text = f"before {shown} after"
    cleaned = Scrubber([SECRET]).text(text)
    assert cleaned == f"before {REDACTED} after", (form, cleaned)


@pytest.mark.parametrize("prefix", ["", "u", "us", "user:", "\0user\0", "user=x\1auth=Bearer "])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_secret_inside_a_larger_base64_payload(prefix: str, encode: object) -> None:
    """HTTP Basic, SASL PLAIN and XOAUTH2 encode the secret with what surrounds it."""
    payload = encode((prefix + SECRET + "\1tail").encode())  # type: ignore[operator]
    cleaned = Scrubber([SECRET]).text(f"AUTH {payload.decode()}")
    assert REDACTED in cleaned
    # what is left of the encoding cannot give the secret back
    left = cleaned.replace(REDACTED, "")
    for start in range(len(left)):
        for end in range(start + 4, min(start + 24, len(left)) + 1):
            try:
                decoded = base64.b64decode(left[start:end] + "==", altchars=b"-_")
            except Exception:
                continue
            assert SECRET.encode()[:8] not in decoded


def test_json_like_data_at_any_depth_keys_included() -> None:
    data = {"ok": True, "n": 3, SECRET: [f"x{SECRET}y", (json.dumps({"t": SECRET}),)],
            "b": SECRET.encode()}
    cleaned = scrub(data, [SECRET])
    assert cleaned == {"ok": True, "n": 3, REDACTED: [f"x{REDACTED}y",
                                                     [json.dumps({"t": REDACTED})]],
                       "b": REDACTED}
    assert scrub(data, []) is data


def test_short_values_are_not_scrubbed() -> None:
    assert MIN_LENGTH == 4
    scrubber = Scrubber(["abc", "", None])  # type: ignore[list-item]
    assert len(scrubber) == 0 and not scrubber
    assert scrubber.text("abc abc") == "abc abc"
    assert all(len(form) >= MIN_LENGTH for form in secret_forms("abcd"))


def test_longer_forms_go_first() -> None:
    scrubber = Scrubber(["token", "token-with-suffix"])
    assert scrubber.text("a token-with-suffix b token") == f"a {REDACTED} b {REDACTED}"


def test_patterns_and_capacity() -> None:
    scrubber = Scrubber(patterns=[(re.compile(r"(?i)bearer\s+\S+"), "Bearer " + REDACTED)],
                        capacity=2)
    assert scrubber  # patterns alone make it active
    assert scrubber.text("Authorization: Bearer abc.def") == f"Authorization: Bearer {REDACTED}"
    scrubber.add("first-secret", "second-secret", "third-secret")
    assert list(scrubber) == ["second-secret", "third-secret"]
    assert scrubber.text("first-secret third-secret") == f"first-secret {REDACTED}"


def test_concurrent_adds_and_uses() -> None:
    scrubber = Scrubber()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(60):
                value = f"secret-{n}-{i:04d}"
                scrubber.add(value)
                assert scrubber.text(f"<{value}>") == f"<{REDACTED}>"
        except BaseException as exc:  # handed to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(scrubber) == 360
    assert len(scrubber.forms()) > 256  # the indexed matcher


def test_the_filter_cleans_message_arguments_exception_and_stack() -> None:
    scrubber = Scrubber([SECRET])
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("janito-test-scrub")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    handler = Keep()
    logger.addHandler(handler)
    filter_ = ScrubFilter(scrubber)
    filter_.install(["janito-test-scrub"])
    filter_.install(["janito-test-scrub"])
    assert logger.filters.count(filter_) == 1
    try:
        logger.warning("refused %s (%r)", SECRET, {"token": SECRET})
        try:
            raise ValueError(f"the server said {json.dumps(SECRET)}")
        except ValueError:
            logger.exception("failed", stack_info=True)
        logger.info("bad %s %s", "only one argument")
    finally:
        logger.removeHandler(handler)
        logger.removeFilter(filter_)
    formatter = logging.Formatter()
    texts = [formatter.format(record) for record in records]
    assert len(texts) == 3
    for text in texts:
        for form in _transforms(SECRET).values():
            assert form not in text, text
    assert records[0].getMessage() == f"refused {REDACTED} ({{'token': '{REDACTED}'}})"
    assert records[1].exc_info is None and REDACTED in (records[1].exc_text or "")
    assert "only one argument" in records[2].getMessage()


def test_the_filter_can_ask_for_the_secrets_of_the_moment() -> None:
    current: list[str] = []
    filter_ = ScrubFilter(lambda: current)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "say %s", ("hush-hush",), None)
    assert filter_.filter(record) and record.getMessage() == "say hush-hush"
    current.append("hush-hush")
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "say %s", ("hush-hush",), None)
    assert filter_.filter(record) and record.getMessage() == f"say {REDACTED}"


def test_many_values_are_found_in_one_pass() -> None:
    """Past a few hundred forms the matcher indexes them; it finds what the simple one does."""
    values = [f"tok-{n:05d}-{'x' * (n % 7)}" for n in range(400)]
    many = Scrubber(values)
    few = Scrubber(values[:5])
    text = " ".join(["plain words", values[3], json.dumps({"v": values[399]}), values[150] * 2,
                     base64.b64encode(values[42].encode()).decode(), "tail"])
    cleaned = many.text(text)
    for value in (values[3], values[399], values[150], values[42]):
        assert value not in cleaned
    assert cleaned.startswith("plain words ") and cleaned.endswith(" tail")
    assert cleaned.count(REDACTED) == 5
    assert few.text(values[3]) == REDACTED and few.text(values[399]) == values[399]


# -- a secret inside a larger payload, in every encoding, through dispatch -----------------

def _percent_every_byte(data: bytes) -> str:
    return "".join(f"%{byte:02X}" for byte in data)


def _mime(data: bytes, newline: str = "\n") -> str:
    # base64.encodebytes wraps at 76 columns, as RFC 2045 asks of a MIME body
    return base64.encodebytes(data).decode().replace("\n", newline)


def _wrapped(text: str, width: int) -> str:
    return "\n".join(text[at:at + width] for at in range(0, len(text), width))


#: How a server, a client or a log line may carry a payload holding the secret.
ENCODINGS: dict[str, Callable[[bytes], str]] = {
    "as is": lambda data: data.decode(),
    "JSON": lambda data: json.dumps(data.decode()),
    "hex": bytes.hex,
    "HEX": lambda data: data.hex().upper(),
    "hex wrapped at 60 (xxd -p)": lambda data: _wrapped(data.hex(), 60),
    "base64": lambda data: base64.b64encode(data).decode(),
    "base64, no padding": lambda data: base64.b64encode(data).decode().rstrip("="),
    "URL-safe base64": lambda data: base64.urlsafe_b64encode(data).decode(),
    "MIME base64, LF": _mime,
    "MIME base64, CRLF": lambda data: _mime(data, "\r\n"),
    "MIME base64 in a JSON string": lambda data: json.dumps({"body": _mime(data, "\r\n")}),
    "PEM-like base64 wrapped at 64": lambda data: _wrapped(base64.b64encode(data).decode(), 64),
    "quote": lambda data: quote(data.decode(), safe=""),
    "quote_plus": lambda data: quote_plus(data.decode()),
    "every byte as %XX": _percent_every_byte,
    "every byte as %xx": lambda data: _percent_every_byte(data).lower(),
    "percent-encoded twice": lambda data: quote(quote(data.decode(), safe=""), safe=""),
    "every byte as %XX, twice": lambda data: quote(_percent_every_byte(data), safe=""),
    "base32": lambda data: base64.b32encode(data).decode(),
    "base32, lower case": lambda data: base64.b32encode(data).decode().lower(),
    "base32, no padding": lambda data: base64.b32encode(data).decode().rstrip("="),
}
OFFSETS = range(60)
FILLER = "user=alice@example.test\x01auth=Bearer "


def _payload(secret: str, offset: int) -> bytes:
    before = (FILLER * 3)[:offset]
    return f"{before}{secret}\x01tail={'z' * (offset % 7)}".encode()


def _decodings(text: str) -> Iterator[bytes]:
    """Every reading of ``text`` a person could try: as it is, and each piece left between
    redactions decoded as hex, base64, base32 and percent-encoding (once and twice), at
    every alignment, line breaks (real or JSON-escaped) taken out."""
    yield text.encode("utf-8", "surrogatepass")
    for piece in text.split(REDACTED):
        flat = re.sub(r"\s|\\[rn]", "", piece)
        yield unquote_to_bytes(flat)
        yield unquote_to_bytes(unquote_to_bytes(flat).decode("latin-1"))
        for run in re.findall(r"[0-9A-Fa-f]+", flat):
            for start in (0, 1):
                usable = run[start:start + (len(run) - start) // 2 * 2]
                yield bytes.fromhex(usable)
        for run in re.findall(r"[A-Za-z0-9+/_-]+", flat):
            for start in range(4):
                usable = run[start:start + (len(run) - start) // 4 * 4]
                yield base64.b64decode(usable.replace("-", "+").replace("_", "/"))
        for run in re.findall(r"[A-Za-z2-7]+", flat):
            for start in range(8):
                usable = run[start:start + (len(run) - start) // 8 * 8].upper()
                yield base64.b32decode(usable)


def _leaks(text: str, secret: str) -> list[str]:
    """The pieces of ``secret`` (any MIN_LENGTH bytes of it in a row) some reading of
    ``text`` gives back."""
    raw = secret.encode()
    windows = {raw[at:at + MIN_LENGTH] for at in range(len(raw) - MIN_LENGTH + 1)}
    return sorted({window.decode("utf-8", "replace") for reading in _decodings(text)
                   for window in windows if window in reading})


def test_the_leak_check_sees_each_encoding_unscrubbed() -> None:
    """Without the scrubber, every encoding at every offset gives the secret back, so the
    dispatched probes below can fail."""
    for name, encode in ENCODINGS.items():
        for offset in OFFSETS:
            assert _leaks(encode(_payload(SECRET, offset)), SECRET), (name, offset)


PROBE_LOG = "janito-test-scrub-probe"


@tool()
class QuoteServerReply(BaseTool):
    """Log in to a server that refuses, quoting what it was sent in some encoding."""

    def run(self, encoding: str, offset: int) -> dict[str, Any]:
        """Log in.

        Args:
            encoding: How the server encodes its reply.
            offset: Where the credential sits in what the server quotes.
        """
        token = get_secret("probe_token")
        assert token is not None
        # what every distribution does with the credentials it uses
        scrubber = Scrubber([token])
        reply = ENCODINGS[encoding](_payload(token, offset))
        logging.getLogger(PROBE_LOG).warning("login refused: %s", reply)
        self.report_error(scrubber.text(f"login refused: {reply}"))
        return scrubber.value({"success": False, "error": f"the server said: {reply}",
                               "error_type": "auth_failed", "reply": reply})


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_dispatched_result_report_and_log_line_never_give_the_secret_back(
        encoding: str) -> None:
    set_secret("probe_token", SECRET)
    registry = Registry(autoload=(), reports="logging")
    registry.add_tool(QuoteServerReply)
    kept = _Keep()
    loggers = [logging.getLogger(PROBE_LOG), logging.getLogger("janito.reports")]
    # the log filter of a toolset, asking the store for the secrets in force
    filter_ = ScrubFilter(lambda: [get_secret("probe_token") or ""])
    filter_.install([PROBE_LOG])
    for logger in loggers:
        logger.addHandler(kept)
        logger.setLevel(logging.DEBUG)
    try:
        turn = [{"id": f"call_{offset}", "type": "function",
                 "function": {"name": "QuoteServerReply",
                              "arguments": json.dumps({"encoding": encoding, "offset": offset})}}
                for offset in OFFSETS]
        items = execute_tool_calls(turn, registry=registry)
    finally:
        for logger in loggers:
            logger.removeHandler(kept)
        loggers[0].removeFilter(filter_)
    assert [item["tool_call_id"] for item in items] == [f"call_{n}" for n in OFFSETS]
    for offset, item in zip(OFFSETS, items, strict=True):
        result = json.loads(item["content"])
        assert result["error_type"] == "auth_failed", result
        assert REDACTED in result["reply"], (encoding, offset, result)
        for text in (result["reply"], result["error"], item["content"]):
            assert not _leaks(text, SECRET), (encoding, offset, text)
    formatter = logging.Formatter()
    lines = [formatter.format(record) for record in kept.records]
    # one log line of the tool's own and one report for each call
    assert len(lines) == 2 * len(OFFSETS), lines
    for line in lines:
        assert not _leaks(line, SECRET), (encoding, line)


def test_text_around_a_wrapped_secret_is_kept() -> None:
    """A redaction inside a MIME body takes the secret's characters (and the line breaks
    among them) only: the lines before and after, and text without secrets, are as they
    were, even where the same breaks join other base64."""
    other = base64.encodebytes(b"nothing secret here " * 12).decode()
    body = _mime(_payload(SECRET, 40), "\r\n")
    scrubber = Scrubber([SECRET])
    assert scrubber.text(other) == other
    cleaned = scrubber.text(f"Subject: x\r\n\r\n{body}--\r\n{other}")
    assert cleaned.startswith("Subject: x\r\n\r\n") and cleaned.endswith(f"--\r\n{other}")
    assert cleaned.count(REDACTED) == 1
    first, second = cleaned.split(REDACTED)
    before, after = first[len("Subject: x\r\n\r\n"):], second[:second.index("--")]
    # what is left of the body is its own text on either side of the secret's characters
    assert body.startswith(before) and body.endswith(after)
    core = len(re.sub(r"\s", "", body)) - len(re.sub(r"\s", "", before + after))
    assert len(SECRET.encode()) * 4 // 3 - 2 <= core <= len(SECRET.encode()) * 4 // 3 + 1
    assert not _leaks(cleaned, SECRET)


def test_many_values_are_found_across_line_breaks_too() -> None:
    values = [f"tok-{n:05d}-{'x' * (n % 7)}" for n in range(400)]
    many = Scrubber(values)
    for offset in (0, 1, 2, 30, 59):
        body = _mime(_payload(values[42], offset))
        assert not _leaks(many.text(body), values[42]), offset
        assert not _leaks(many.text(_wrapped(_payload(values[7], offset).hex(), 60)), values[7])


def test_a_backslash_before_a_form_is_no_line_break() -> None:
    """A form starting with "n" after a backslash (a Windows path, lower-case base32 of a
    value starting with "h") is found as it stands; JSON-escaped breaks still join."""
    secret = "hunter2-is-the-password"
    form = base64.b32encode(secret.encode()).decode().lower()
    assert form.startswith("n")
    scrubber = Scrubber([secret])
    for text in (f"C:\\temp\\{form}", json.dumps(f"C:\\temp\\{form}"),
                 json.dumps(_mime(_payload(secret, 11))) + f" C:\\temp\\{form}"):
        assert not _leaks(scrubber.text(text), secret), text
