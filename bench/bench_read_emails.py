"""ReadEmails: IMAP round trips for 20 and 200 messages, against a per-message baseline.

Starts the private Dovecot of janito-gmail's tests (plugins/janito-gmail/tests/
_gmail_servers.py: TLS on 127.0.0.1, a Maildir user), stores 20 and 200 messages (plain,
HTML-only and with attachments, in turn) in two folders, and reads each folder whole with
ReadEmails through ``call_tool``. Two counts per read:

- client: tagged IMAP commands the process sent (each waits for its answer: a round trip),
  counted by wrapping imaplib's tag generator; connecting and logging in included;
- server: the commands Dovecot's rawlog recorded for that session (after login).

The baseline, measured in the same run on the same folders, is a straightforward client
that FETCHes each message on its own (one round trip per message). Times are medians of
alternating runs and are printed for information only; the target is round trips that stay
constant as the number of messages grows.

    python bench/bench_read_emails.py [--rounds 5]

Needs the dovecot binary (Debian package dovecot-imapd) and janito-gmail installed.
"""

from __future__ import annotations

import argparse
import imaplib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins" / "janito-gmail" / "tests"))

import _gmail_servers as servers  # noqa: E402

SIZES = (20, 200)


class Counter:
    def __init__(self) -> None:
        self.count = 0
        original = imaplib.IMAP4._new_tag

        def counting(client: imaplib.IMAP4) -> bytes:
            self.count += 1
            return original(client)  # type: ignore[no-any-return]

        imaplib.IMAP4._new_tag = counting  # type: ignore[method-assign]


def janito_read(registry: Any, folder: str, limit: int) -> dict[str, Any]:
    from janito_core.dispatch import call_tool

    result = call_tool("ReadEmails", {"folder": folder, "limit": limit}, registry=registry)
    if not result.get("success") or result.get("count") != limit:
        raise SystemExit(f"ReadEmails failed on {folder}: {result}")
    return result


def naive_read(server: servers.DovecotServer, folder: str) -> int:
    """One FETCH per message, as a simple client would do it; returns messages read."""
    client = server.client()
    try:
        client.select_folder(folder, readonly=True)
        uids = client.search("ALL")
        for uid in uids:
            client.fetch([uid], ["FLAGS", "BODY.PEEK[]"])
        return len(uids)
    finally:
        client.logout()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed runs per case (median)")
    args = parser.parse_args()

    try:
        server = servers.DovecotServer.start()
    except servers.ServerUnavailable as exc:
        print(f"bench_read_emails: skipped, {exc}")
        return 1 if os.environ.get("CI", "").lower() == "true" else 0
    config = tempfile.mkdtemp(prefix="janito-bench-config-")
    os.environ.update(server.env())
    os.environ["JANITO_CONFIG_DIR"] = config
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    try:
        from janito_core import Registry, Workspace

        registry = Registry(autoload=(), workspace=Workspace(tempfile.mkdtemp()))
        registry.add_toolset("gmail")
        if "ReadEmails" not in registry.names():
            print(f"bench_read_emails: ReadEmails did not load: {registry.skipped()}")
            return 1
        for size in SIZES:
            servers.seed_many(server, f"Bench{size}", servers.mixed_messages(size))
        counter = Counter()
        rows = []
        for size in SIZES:
            folder = f"Bench{size}"
            before = len(server.sessions())
            counter.count = 0
            janito_read(registry, folder, size)
            client_trips = counter.count
            sessions = server.wait_for_sessions(before + 1)
            server_commands = server.tagged_commands(sessions[-1])
            counter.count = 0
            naive_read(server, folder)
            naive_trips = counter.count
            times: dict[str, list[float]] = {"janito": [], "naive": []}
            for _ in range(args.rounds):
                started = time.perf_counter()
                janito_read(registry, folder, size)
                times["janito"].append(time.perf_counter() - started)
                started = time.perf_counter()
                naive_read(server, folder)
                times["naive"].append(time.perf_counter() - started)
            rows.append({
                "messages": size, "client": client_trips, "server": server_commands,
                "naive": naive_trips, "connections": len(sessions) - before,
                "janito_ms": statistics.median(times["janito"]) * 1000,
                "naive_ms": statistics.median(times["naive"]) * 1000,
            })
    finally:
        server.stop()

    print("ReadEmails, IMAP round trips (TLS Dovecot on 127.0.0.1, messages read whole folder)")
    print(f"{'messages':>8}  {'janito':>6}  {'server cmds':>11}  {'per-message':>11}  "
          f"{'janito ms':>9}  {'per-msg ms':>10}  {'time ratio':>10}")
    for row in rows:
        print(f"{row['messages']:>8}  {row['client']:>6}  {len(row['server']):>11}  "
              f"{row['naive']:>11}  {row['janito_ms']:>9.1f}  {row['naive_ms']:>10.1f}  "
              f"{row['janito_ms'] / row['naive_ms']:>10.2f}")
    small, large = rows
    growth = large["client"] / small["client"]
    naive_growth = large["naive"] / small["naive"]
    print(f"server commands per read: {' '.join(large['server'])}")
    print(f"connections per read: {small['connections']} and {large['connections']}")
    print(f"round trips {SIZES[1]}/{SIZES[0]} messages: janito {growth:.2f}x, "
          f"per-message baseline {naive_growth:.2f}x")
    for rtt in (0.02, 0.1):  # arithmetic, not measured: what the counts mean on a network
        print(f"at {rtt * 1000:.0f} ms per round trip, {SIZES[1]} messages wait "
              f"{large['client'] * rtt:.2f} s (janito) vs {large['naive'] * rtt:.2f} s "
              "(per-message) on the network alone")
    constant = small["client"] == large["client"] and small["server"] == large["server"]
    print("target (round trips constant in the number of messages): "
          + ("meets target" if constant else "MISSES target"))
    return 0 if constant else 1


if __name__ == "__main__":
    sys.exit(main())
