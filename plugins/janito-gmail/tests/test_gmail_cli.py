"""Each tool module runs alone: python -m janito_gmail.<module> ... --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import _gmail_servers as servers

HERE = Path(__file__).parent


def run_module(module: str, *args: str, env: dict[str, str], cwd: Path) -> tuple[int, Any, str]:
    proc = subprocess.run(
        [sys.executable, "-m", f"janito_gmail.{module}", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def test_modules_run_alone(mail_env: dict[str, str], dovecot: Any, folder: str,
                           tmp_path: Path) -> None:
    uids = servers.seed(dovecot, folder, [servers.plain_message(1),
                                          servers.attachment_message(2, b"%PDF-cli")])
    env = dict(os.environ)
    code, result, _ = run_module("mark_emails", "read", "--folder", folder,
                                 "--ids", *map(str, uids), "--dry-run", env=env, cwd=tmp_path)
    assert (code, result["dry_run"], result["count"], result["mark"]) == (0, True, 2, "read")
    code, result, _ = run_module("save_attachment", str(uids[1]), "--folder", folder,
                                 "--filename", "report.pdf", "--json", env=env, cwd=tmp_path)
    assert code == 0 and (tmp_path / "report.pdf").read_bytes() == b"%PDF-cli"
    code, result, _ = run_module("read_emails", "--folder", "Missing", "--limit", "3",
                                 "--json", env=env, cwd=tmp_path)
    assert code == 1 and result["error_type"] == "folder_not_found"
    assert servers.PASSWORD not in json.dumps(result)


def test_module_without_credentials_says_how_to_set_them(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JANITO_GMAIL_", "JANITO_SECRET_GMAIL_"))}
    env["JANITO_CONFIG_DIR"] = str(tmp_path / "config")
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    code, result, _ = run_module("list_folders", "--json", env=env, cwd=tmp_path)
    assert code == 2
    assert "janito secrets set gmail_username" in result["error"]


def test_help_lists_documented_options(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "janito_gmail.send_email", "--help"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0
    # required parameters are positional, the others options
    for option in ("to", "body", "--cc", "--bcc", "--subject", "--in-reply-to", "--json"):
        assert option in proc.stdout
    assert "Recipient addresses" in proc.stdout


def test_help_keeps_whole_descriptions_with_colons_inside(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "janito_gmail.count_emails", "--help"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "COLUMNS": "400"})
    assert proc.returncode == 0
    # the help of --query goes on past "older_than:7d", which starts a continuation line
    assert "older_than:7d\"); on other servers" in " ".join(proc.stdout.split())


def test_missing_dovecot_skips_or_fails_under_ci(tmp_path: Path) -> None:
    """The server tests skip with a reason without dovecot, and fail instead under CI=true."""
    env = dict(os.environ)
    env["JANITO_GMAIL_TEST_DOVECOT"] = str(tmp_path / "no-such-dovecot")
    args = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
            str(HERE / "test_gmail_read.py"), "-k", "list_folders"]
    env.pop("CI", None)
    skipped = subprocess.run(args, capture_output=True, text=True, env=env, cwd=HERE.parent,
                             timeout=120, stdin=subprocess.DEVNULL)
    assert skipped.returncode == 0, skipped.stdout
    assert "1 skipped" in skipped.stdout
    assert "dovecot" in skipped.stdout and "dovecot-imapd" in skipped.stdout
    env["CI"] = "true"
    failed = subprocess.run(args, capture_output=True, text=True, env=env, cwd=HERE.parent,
                            timeout=120, stdin=subprocess.DEVNULL)
    assert failed.returncode == 1, failed.stdout
    assert "CI=true" in failed.stdout
