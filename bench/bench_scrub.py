"""The scrubber's cost: ``Scrubber.text`` over what tools return, against the scrubber as it
was before it knew hex, base32, every-byte and double percent-encoding and wrapped
encodings, in the same process, interleaved.

The baseline is the previous scrubber's work, kept here only to be measured: the forms it
knew (the value, its JSON and ``repr`` escapes, three percent-encodings, base64 and
URL-safe base64 whole and inside a larger payload) replaced by the same matcher. The new
scrubber looks for about twice as many forms, and reads a text holding line breaks a
second time with the breaks between base64 characters taken out. The texts hold no
secret, which is the common case and the one that pays for every form:

- a source file of 1 MB (lines start with indentation, so few breaks join);
- prose of 1 MB (lines end and start with letters: every break joins, the worst case);
- a MIME message of 1 MB (base64 at 76 columns);
- a result of 2 KB (a JSON listing).

Two secrets are registered, as a mail toolset has (a user name and a password).
Target: at most 1.5x the previous scrubber on each text (CPU time).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
from urllib.parse import quote, quote_plus

from _common import alternate_calls, exit_status, load_note, verdict

from janito_core.scrub import MIN_LENGTH, Scrubber, _Matcher

SECRETS = ("alice@example.test", "pa55-w0rd/with+odd=chars")
TARGET = 1.5


def previous_forms(secret: str) -> set[str]:
    """The forms the scrubber knew before (its ``secret_forms``)."""
    forms = {secret}
    for ascii_only in (True, False):
        escaped = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        forms.add(escaped)
        forms.add(json.dumps(escaped, ensure_ascii=ascii_only)[1:-1])
    forms.add(repr(secret)[1:-1])
    forms.update((quote(secret, safe=""), quote(secret), quote_plus(secret)))
    raw = secret.encode()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms.update((whole, whole.rstrip("=")))
        for offset in (0, 1, 2):
            size = offset + len(raw)
            core = encode(bytes(offset) + raw).decode("ascii")[4 if offset else 0: 4 * (size // 3)]
            if len(core) >= 8:
                forms.add(core)
    return {form for form in forms if len(form) >= MIN_LENGTH}


def texts() -> dict[str, str]:
    rng = random.Random(7)
    words = ["the", "scrubber", "reads", "every", "result", "before", "a", "model", "sees",
             "it", "and", "keeps", "values", "out", "of", "logs", "reports", "errors"]
    source = []
    while sum(map(len, source)) < 1_000_000:
        depth = rng.randrange(0, 4)
        source.append("    " * depth + f"value_{rng.randrange(999)} = compute(" +
                      ", ".join(rng.choices(words, k=4)) + ")\n")
    prose = []
    while sum(map(len, prose)) < 1_000_000:
        prose.append(" ".join(rng.choices(words, k=12)) + "\n")
    body = base64.encodebytes(rng.randbytes(740_000)).decode().replace("\n", "\r\n")
    listing = json.dumps({"success": True, "entries": [
        {"name": f"file_{n}.py", "size": rng.randrange(10_000), "type": "file"}
        for n in range(40)]})
    return {"source, 1 MB": "".join(source), "prose, 1 MB": "".join(prose),
            "MIME message, 1 MB": "Content-Transfer-Encoding: base64\r\n\r\n" + body,
            "JSON result, 2 KB": listing[:2048]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    new = Scrubber(SECRETS)
    old_forms: set[str] = set()
    for secret in SECRETS:
        old_forms.update(previous_forms(secret))
    old = _Matcher(old_forms)
    print(f"scrubber, medians of {args.repeat} interleaved repeats; {load_note()}")
    print(f"  forms: {len(new.forms())} now, {len(old.forms)} before")
    verdicts = []
    for name, text in texts().items():
        assert new.text(text) == text and old.replace(text) == text
        number = 2000 if len(text) < 10_000 else 5
        medians = alternate_calls({"now": lambda t=text: new.text(t),  # type: ignore[misc]
                                   "before": lambda t=text: old.replace(t)},  # type: ignore[misc]
                                  number, args.repeat)
        ratio = medians["now"].cpu / medians["before"].cpu
        result = verdict(ratio, TARGET)
        verdicts.append(result)
        print(f"  {name:<20} now {medians['now'].cpu * 1e6:10.1f} µs CPU, before "
              f"{medians['before'].cpu * 1e6:10.1f} µs: {ratio:.2f}x (target at most "
              f"{TARGET}x): {result}")
    return exit_status(*verdicts)


if __name__ == "__main__":
    sys.exit(main())
