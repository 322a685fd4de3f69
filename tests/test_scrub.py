"""The one secret scrubber every distribution uses: values, their transformed forms, logs."""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from urllib.parse import quote, quote_plus

import pytest

from janito_core import Scrubber, ScrubFilter
from janito_core.scrub import MIN_LENGTH, REDACTED, scrub, secret_forms

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
