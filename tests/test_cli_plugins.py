"""``janito secrets`` and ``janito plugins`` and plugin subcommands, run for real.

See test_cli.py for the set-up: every invocation has its own JANITO_CONFIG_DIR and the
keyring's ``fail`` backend, so secrets land in ``<config>/secrets.json``.
"""

from __future__ import annotations

import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from helpers.distributions import clean_env
from helpers.faults import HOOK_ERRORS
from test_cli import PARALLEL, Janito, Sites, build_sites, make_janito


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    return build_sites(tmp_path_factory.mktemp("cli-plugin-sites"))


@pytest.fixture
def janito(testkit_dir: Path, workspace: Path, tmp_path: Path) -> Janito:
    return make_janito(testkit_dir, workspace, tmp_path)


# -- janito secrets -----------------------------------------------------------------------

VALUE = "s3cr3t-Value with spaces"


def test_secrets_round_trip_without_echoing_the_value(janito: Janito) -> None:
    empty = janito("secrets", "list")
    assert empty.code == 0, empty
    assert empty.out == "No secrets are stored.\n"
    assert str(janito.config / "secrets.json") in empty.err  # where they would live

    stored = janito("secrets", "set", "Gmail_Password", stdin=VALUE + "\n")
    assert stored.code == 0, stored
    assert VALUE not in stored.out + stored.err
    assert stored.out == ""
    assert "gmail_password" in stored.err.lower()
    store = janito.config / "secrets.json"
    assert json.loads(store.read_text(encoding="utf-8")) == {"gmail_password": VALUE}
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600

    got = janito("secrets", "get", "gmail_password")
    assert (got.code, got.out) == (0, VALUE + "\n"), got
    assert janito("secrets", "get", "GMAIL_PASSWORD").out == VALUE + "\n"  # names ignore case

    janito("secrets", "set", "other", stdin="two\r\n")
    assert janito("secrets", "get", "other").out == "two\n"  # one CRLF line ending removed
    listed = janito("secrets", "list")
    assert listed.code == 0, listed
    assert listed.out == "gmail_password\nother\n"
    assert VALUE not in listed.out + listed.err
    as_json = janito("secrets", "list", "--json")
    assert as_json.json() == ["gmail_password", "other"]

    deleted = janito("secrets", "delete", "gmail_password")
    assert deleted.code == 0, deleted
    assert VALUE not in deleted.out + deleted.err
    assert janito("secrets", "list", "--json").json() == ["other"]
    missing = janito("secrets", "get", "gmail_password")
    assert (missing.code, missing.out) == (1, ""), missing
    assert "gmail_password" in missing.err
    again = janito("secrets", "delete", "gmail_password")
    assert (again.code, again.out) == (1, ""), again


def test_secrets_refuse_a_store_that_cannot_be_parsed(janito: Janito) -> None:
    janito.config.mkdir(parents=True)
    store = janito.config / "secrets.json"
    content = b'{"gmail_password": "kept"}\n' + b"\x00"  # one stray byte
    store.write_bytes(content)
    runs = janito.many({
        "set": ["secrets", "set", "other"],
        "get": ["secrets", "get", "gmail_password"],
        "list": ["secrets", "list"],
        "list-json": ["secrets", "list", "--json"],
        "delete": ["secrets", "delete", "gmail_password"],
    }, stdin="new-value\n")
    for action, ran in runs.items():
        assert ran.code == 1, (action, ran)
        assert ran.out == "", (action, ran)
        assert f"the secrets store {store} is not valid JSON" in ran.err, (action, ran)
        assert "Traceback" not in ran.err and "kept" not in ran.err
    assert store.read_bytes() == content


def test_secrets_set_refuses_a_value_that_is_not_utf8(janito: Janito) -> None:
    import subprocess

    def set_with(data: bytes, *, encoding: str = "utf-8") -> subprocess.CompletedProcess[bytes]:
        env = clean_env({"JANITO_CONFIG_DIR": str(janito.config), "PYTHONIOENCODING": encoding})
        return subprocess.run([*janito.command, "secrets", "set", "token"], input=data, env=env,
                              capture_output=True, timeout=60, check=False)

    for encoding in ("utf-8", "utf-8:surrogateescape"):
        refused = set_with(b"ab\xffcd\n", encoding=encoding)
        assert refused.returncode == 2, refused
        assert b"not UTF-8 text (byte 0xff at offset 2); nothing was stored" in refused.stderr
        assert b"Traceback" not in refused.stderr
    assert not (janito.config / "secrets.json").exists()
    stored = set_with("h\u00e9 \u65e5\r\n".encode())
    assert stored.returncode == 0, stored
    assert janito("secrets", "get", "token").out == "h\u00e9 \u65e5\n"


def _talk_to_a_terminal(command: list[str], env: dict[str, str], cwd: Path, prompt: str,
                        answer: str) -> tuple[int, str]:
    """Run ``command`` on a new pseudo-terminal that is its controlling terminal; answer
    ``answer`` once ``prompt`` shows; return the exit status and everything it displayed."""
    import fcntl
    import pty
    import select
    import subprocess
    import termios
    import time

    master, slave = pty.openpty()

    def take_the_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                               start_new_session=True, preexec_fn=take_the_terminal)
    os.close(slave)
    shown = b""
    answered = False
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            if not answered and prompt.encode() in shown:
                os.write(master, answer.encode() + b"\n")
                answered = True
        return process.wait(timeout=60), shown.decode("utf-8", "replace")
    finally:
        os.close(master)
        if process.poll() is None:  # pragma: no cover - only when the test fails
            process.kill()
            process.wait()


@pytest.mark.skipif(os.name != "posix", reason="needs a POSIX pseudo-terminal")
def test_set_on_a_terminal_asks_with_a_hidden_prompt(janito: Janito) -> None:
    env = clean_env({"JANITO_CONFIG_DIR": str(janito.config)}, path=janito.path)
    code, shown = _talk_to_a_terminal([*janito.command, "secrets", "set", "tty_secret"], env, janito.cwd,
                                      "Value for tty_secret: ", "typed-but-hidden")
    assert code == 0, shown
    assert "Value for tty_secret: " in shown
    assert "typed-but-hidden" not in shown  # the terminal did not echo it, janito did not print it
    assert janito("secrets", "get", "tty_secret").out == "typed-but-hidden\n"


def test_environment_overrides_are_listed_and_win(janito: Janito) -> None:
    janito("secrets", "set", "api_key", stdin="stored")
    env = {"JANITO_SECRET_API_KEY": "from-env", "JANITO_SECRET_CI_TOKEN": "tok"}
    listed = janito("secrets", "list", env=env)
    assert listed.out == "api_key\nci_token\n"
    assert "from-env" not in listed.out + listed.err and "tok\n" not in listed.out
    assert janito("secrets", "list", "--json", env=env).json() == ["api_key", "ci_token"]
    assert janito("secrets", "get", "api_key", env=env).out == "from-env\n"
    assert janito("secrets", "get", "ci_token", env=env).out == "tok\n"
    assert janito("secrets", "get", "api_key").out == "stored\n"
    # Deleting touches the store only; an override is not something janito can delete.
    assert janito("secrets", "delete", "ci_token", env=env).code == 1


def test_secrets_usage_errors(janito: Janito) -> None:
    cases = {
        "empty": (["set", "x"], "", "no value given"),
        "newline only": (["set", "x"], "\n", "no value given"),
        "get without name": (["get"], None, "needs a NAME"),
        "set without name": (["set"], "value", "needs a NAME"),
        "delete without name": (["delete"], None, "needs a NAME"),
        "digit first": (["get", "1bad"], None, "invalid secret name"),
        "dash": (["set", "has-dash"], "value", "invalid secret name"),
    }
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        ran = {key: pool.submit(janito, "secrets", *args, stdin=stdin)
               for key, (args, stdin, _) in cases.items()}
    for key, (_, _, fragment) in cases.items():
        done = ran[key].result()
        assert done.code == 2, done
        assert done.out == ""
        assert fragment in done.err, done
    assert not (janito.config / "secrets.json").exists()


# -- janito plugins -----------------------------------------------------------------------


def test_plugins_lists_hook_plugins_and_their_failures(janito: Janito, sites: Sites) -> None:
    runs = janito.many({"json": ["plugins", "--json"], "human": ["plugins"]},
                       path=[sites.hello, sites.raising])
    ran = runs["json"]
    assert ran.code == 0, ran
    rows = ran.json()
    names = {(r["name"], r["distribution"]) for r in rows if r["error"] is None}
    assert {("acme-hello:hello", "acme-hello"), ("acme-raising:raising", "acme-raising"),
            ("janito.runner", "janito-core"), ("janito.stderr", "janito-core")} <= names
    [failed] = [r for r in rows if r["error"] is not None]
    assert failed["name"] is None and failed["distribution"] == "acme-unloadable"
    assert "acme_not_there" in failed["error"]

    human = runs["human"]
    assert human.code == 0, human
    lines = human.out.splitlines()
    assert lines[0].split() == ["PLUGIN", "DISTRIBUTION"]
    assert any(line.split() == ["acme-hello:hello", "acme-hello"] for line in lines)
    assert "acme-unloadable" in human.err and "acme_not_there" in human.err

    alone = janito("plugins", "--json", path=[sites.hello, sites.raising], env={"JANITO_PLUGINS": "hello"})
    loaded = {r["name"] for r in alone.json()}
    assert "acme-hello:hello" in loaded and "acme-raising:raising" not in loaded
    assert all(r["error"] is None for r in alone.json())


def test_a_plugin_subcommand_appears_and_runs(janito: Janito, sites: Sites) -> None:
    ran = janito.many({
        "help": ["--help"], "hello": ["hello", "world", "-t", "testkit", "-r"],
        "fail": ["hello", "world", "--fail"], "usage": ["hello"],
        "unknown": ["hello", "world", "-t", "nope"],
    }, path=[sites.hello])
    helped = ran["help"]
    assert helped.code == 0, helped
    assert "hello" in helped.out and "greet someone" in helped.out

    assert ran["hello"].code == 0, ran["hello"]
    answer = ran["hello"].json()
    assert answer["greeting"] == "hello world"
    assert "ReadNote" in answer["tools"] and "WriteNote" not in answer["tools"]
    assert ran["fail"].code == 4, ran["fail"]  # the handler's return value is the exit status

    usage = ran["usage"]  # argparse errors of a plugin command: exit 2
    assert usage.code == 2 and "who" in usage.err, usage
    unknown = ran["unknown"]
    assert unknown.code == 2 and "no installed toolset is called 'nope'" in unknown.err, unknown
    # Without the plugin there is no such command.
    assert janito("hello", "world").code == 2


def test_a_plugin_whose_hook_raises_breaks_nothing_else(janito: Janito, sites: Sites) -> None:
    commands = {" ".join(args) or "(none)": args for args in (
        ["tools", "-t", "testkit", "--json"], ["toolsets", "--json"], ["schema", "-t", "testkit", "Nothing"],
        ["run", "-t", "testkit", "Nothing"], ["secrets", "list"], ["plugins"], ["--version"], ["--help"],
        ["hello", "there"], [],
    )}
    ran = janito.many(commands, path=[sites.raising, sites.hello])
    for key, done in ran.items():
        assert done.code == (2 if key == "(none)" else 0), done
    helped = ran["--help"]
    assert "acme-raising" in helped.err and HOOK_ERRORS["janito_register_commands"] in helped.err
    assert "hello" in helped.out  # the other plugin's command is still there
    hello = ran["hello there"]
    assert hello.json()["greeting"] == "hello there"
    assert HOOK_ERRORS["janito_register_commands"] in hello.err
    assert "usage: janito" in ran["(none)"].err
