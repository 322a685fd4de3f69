"""The secrets store: environment overrides, the private file store, the keyring store."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from helpers.concurrent_secrets import set_from_processes, set_from_threads
from helpers.distributions import run_python, write_files

from janito_core.secrets import (
    SecretStoreError,
    backend_name,
    config_dir,
    delete_secret,
    env_var,
    get_secret,
    has_secret,
    list_secrets,
    set_secret,
)


def test_the_config_dir_comes_from_janito_config_dir(isolated: Path) -> None:
    assert config_dir() == isolated


def test_without_janito_config_dir_the_xdg_folder_is_used(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JANITO_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir() == tmp_path / "xdg" / "janito"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_dir() == tmp_path / "home" / ".config" / "janito"


def test_the_keyring_is_bypassed_and_the_file_store_used(isolated: Path) -> None:
    assert backend_name() == f"file {isolated / 'secrets.json'}"


def test_set_get_delete_in_the_file_store(isolated: Path) -> None:
    assert get_secret("api_token") is None
    assert has_secret("api_token") is False
    set_secret("api_token", "t0ken-value")
    assert get_secret("api_token") == "t0ken-value"
    assert get_secret("API_TOKEN") == "t0ken-value"
    assert has_secret("Api_Token") is True
    stored = json.loads((isolated / "secrets.json").read_text(encoding="utf-8"))
    assert stored == {"api_token": "t0ken-value"}
    set_secret("api_token", "second")
    assert get_secret("api_token") == "second"
    assert delete_secret("api_token") is True
    assert delete_secret("api_token") is False
    assert get_secret("api_token") is None


def test_the_secrets_file_is_readable_by_its_owner_only(isolated: Path) -> None:
    set_secret("one", "1")
    path = isolated / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)  # loosened by hand: the next write tightens it again
    set_secret("two", "2")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(isolated.glob(".secrets.*"))  # no temporary files left behind


def test_an_environment_variable_overrides_the_store(isolated: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    set_secret("gmail_password", "from-file")
    assert env_var("gmail_password") == "JANITO_SECRET_GMAIL_PASSWORD"
    monkeypatch.setenv("JANITO_SECRET_GMAIL_PASSWORD", "from-env")
    assert get_secret("gmail_password") == "from-env"
    assert get_secret("GMAIL_PASSWORD") == "from-env"
    monkeypatch.delenv("JANITO_SECRET_GMAIL_PASSWORD")
    assert get_secret("gmail_password") == "from-file"


def test_an_override_needs_no_store_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the config folder should be", encoding="utf-8")
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(blocked))
    monkeypatch.setenv("JANITO_SECRET_ONLY_ENV", "env-value")
    assert get_secret("only_env") == "env-value"
    assert get_secret("missing") is None


def test_list_shows_names_never_values(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_secret("zeta", "value-zeta-123")
    set_secret("alpha", "value-alpha-456")
    monkeypatch.setenv("JANITO_SECRET_FROM_ENV", "value-env-789")
    names = list_secrets()
    assert names == ["alpha", "from_env", "zeta"]
    assert "value" not in repr(names)


STORE = b'{\n "alpha": "one",\n "beta": "two"\n}'

UNPARSEABLE = {
    "one stray byte": STORE + b"x",
    "cut short": STORE[:-3],
    "not JSON": b"{not json",
    "not UTF-8": STORE.replace(b"one", b"on\xff"),
    "an array": b'["alpha", "beta"]',
    "a value that is not a string": b'{"alpha": {"nested": 1}}',
    "nested too deeply": b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("content", list(UNPARSEABLE.values()), ids=list(UNPARSEABLE))
def test_a_store_that_cannot_be_parsed_is_refused_and_kept(isolated: Path, content: bytes) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    store = isolated / "secrets.json"
    store.write_bytes(content)
    store.chmod(0o600)
    before = store.stat()
    for attempt in (lambda: get_secret("alpha"), lambda: set_secret("fresh", "v"),
                    lambda: delete_secret("alpha"), list_secrets, lambda: has_secret("alpha")):
        with pytest.raises(SecretStoreError) as caught:
            attempt()
        assert str(store) in str(caught.value)
        assert caught.value.where == str(store)
        assert "left as it is" in str(caught.value)
    assert store.read_bytes() == content
    after = store.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        before.st_ino, before.st_mtime_ns, before.st_size)
    assert not list(isolated.glob(".secrets.*"))


def test_an_override_still_wins_over_a_store_that_cannot_be_parsed(
        isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "secrets.json").write_bytes(STORE + b"x")
    monkeypatch.setenv("JANITO_SECRET_ALPHA", "from-env")
    assert get_secret("alpha") == "from-env"


def test_an_empty_store_file_is_an_empty_store(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "secrets.json").write_bytes(b"")
    assert get_secret("anything") is None
    assert list_secrets() == []
    set_secret("fresh", "v")
    assert get_secret("fresh") == "v"


def test_a_store_that_cannot_be_read_is_refused(isolated: Path) -> None:
    (isolated / "secrets.json").mkdir(parents=True)  # a folder where the file should be
    with pytest.raises(SecretStoreError, match="not a regular file"):
        get_secret("alpha")
    with pytest.raises(SecretStoreError):
        set_secret("alpha", "v")
    assert (isolated / "secrets.json").is_dir()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_store_without_read_permission_is_refused_not_replaced(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    store = isolated / "secrets.json"
    store.write_bytes(STORE)
    store.chmod(0)
    try:
        with pytest.raises(SecretStoreError, match="cannot be read"):
            set_secret("fresh", "v")
    finally:
        store.chmod(0o600)
    assert store.read_bytes() == STORE


def test_a_fifo_in_place_of_the_store_does_not_block(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    os.mkfifo(isolated / "secrets.json")
    with pytest.raises(SecretStoreError, match="not a regular file"):
        get_secret("alpha")
    with pytest.raises(SecretStoreError, match="not a regular file"):
        set_secret("alpha", "v")


def test_concurrent_set_from_16_threads_loses_nothing(isolated: Path) -> None:
    names = set_from_threads(threads=16, each=8)
    assert list_secrets() == sorted(names)
    assert all(get_secret(name) == f"value-of-{name}" for name in names)
    assert stat.S_IMODE((isolated / "secrets.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((isolated / "secrets.lock").stat().st_mode) == 0o600
    assert not list(isolated.glob(".secrets.*"))


def test_concurrent_set_from_4_processes_loses_nothing(isolated: Path) -> None:
    names = set_from_processes(isolated, processes=4, each=25)
    assert list_secrets() == sorted(names)
    assert all(get_secret(name) == f"value-of-{name}" for name in names)


def test_without_fcntl_threads_still_lose_nothing(tmp_path: Path) -> None:
    """Where fcntl is missing only the thread lock holds; one process still loses nothing."""
    completed = run_python(
        """
        import sys, threading
        sys.modules["fcntl"] = None  # importing it now raises ImportError
        from janito_core import secrets
        barrier = threading.Barrier(16)

        def work(index):
            barrier.wait()
            for n in range(8):
                secrets.set_secret(f"t{index}_{n}", "v")

        workers = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        print(len(secrets.list_secrets()))
        """,
        env={"JANITO_CONFIG_DIR": str(tmp_path / "config")},
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "128"


@pytest.mark.parametrize("name", ["", "1abc", "a-b", "a b", "a" * 65, "é", "a.b", None])
def test_invalid_names_are_refused(name: object) -> None:
    with pytest.raises(ValueError, match="invalid secret name"):
        get_secret(name)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        set_secret(name, "v")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["", None, 5, b"bytes"])
def test_a_secret_value_must_be_a_non_empty_string(value: object) -> None:
    with pytest.raises(ValueError):
        set_secret("name", value)  # type: ignore[arg-type]


MEMORY_KEYRING = '''
from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    priority = 1
    store = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        del self.store[(service, username)]
'''


def test_the_keyring_store_when_a_keyring_is_available(tmp_path: Path) -> None:
    write_files(tmp_path / "site", {"acme_keyring.py": MEMORY_KEYRING})
    completed = run_python(
        """
        import json, os
        from janito_core import secrets
        out = {"backend": secrets.backend_name()}
        secrets.set_secret("mail_password", "hunter2-secret")
        secrets.set_secret("api_key", "k3y-secret")
        out["get"] = secrets.get_secret("MAIL_PASSWORD")
        out["list"] = secrets.list_secrets()
        out["deleted"] = [secrets.delete_secret("api_key"), secrets.delete_secret("api_key")]
        out["after"] = secrets.list_secrets()
        import acme_keyring
        out["raw"] = sorted(u for _, u in acme_keyring.MemoryKeyring.store)
        out["file"] = os.path.exists(os.path.join(os.environ["JANITO_CONFIG_DIR"], "secrets.json"))
        print(json.dumps(out))
        """,
        path=[tmp_path / "site"],
        env={"PYTHON_KEYRING_BACKEND": "acme_keyring.MemoryKeyring",
             "JANITO_CONFIG_DIR": str(tmp_path / "config")},
    )
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout)
    assert out["backend"] == "keyring (acme_keyring.MemoryKeyring)"
    assert out["get"] == "hunter2-secret"
    assert out["list"] == ["api_key", "mail_password"]
    assert out["deleted"] == [True, False]
    assert out["after"] == ["mail_password"]
    assert "secret" not in json.dumps(out["list"] + out["after"])
    assert out["raw"] == ["__janito_secret_names__", "mail_password"]
    assert out["file"] is False


def test_reading_a_secret_from_the_environment_imports_no_keyring() -> None:
    completed = run_python(
        """
        import sys
        from janito_core.secrets import get_secret
        assert get_secret("token") == "abc"
        print("keyring" in sys.modules)
        """,
        env={"JANITO_SECRET_TOKEN": "abc"},
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "False"


def test_the_keyring_index_under_concurrent_set_and_when_broken(tmp_path: Path) -> None:
    """The keyring keeps each value, janito keeps the list of names: 16 threads setting at
    once must all be listed, and a list janito cannot parse is refused, not replaced."""
    write_files(tmp_path / "site", {"acme_keyring.py": MEMORY_KEYRING})
    completed = run_python(
        """
        import json, threading
        from janito_core import secrets
        import acme_keyring
        barrier = threading.Barrier(16)

        def work(index):
            barrier.wait()
            for n in range(8):
                secrets.set_secret(f"t{index}_{n}", f"v{index}_{n}")

        workers = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        out = {"listed": len(secrets.list_secrets()), "value": secrets.get_secret("t3_5")}
        store = acme_keyring.MemoryKeyring.store
        store[("janito", "__janito_secret_names__")] = '["t0_0", "t0_1"'  # cut short
        refused = []
        for attempt in (lambda: secrets.set_secret("fresh", "v"),
                        lambda: secrets.delete_secret("t0_0"), secrets.list_secrets):
            try:
                attempt()
            except secrets.SecretStoreError as exc:
                refused.append(str(exc))
        out["refused"] = refused
        out["index"] = store[("janito", "__janito_secret_names__")]
        out["fresh"] = ("janito", "fresh") in store
        out["t0_0"] = ("janito", "t0_0") in store
        print(json.dumps(out))
        """,
        path=[tmp_path / "site"],
        env={"PYTHON_KEYRING_BACKEND": "acme_keyring.MemoryKeyring",
             "JANITO_CONFIG_DIR": str(tmp_path / "config")},
    )
    assert completed.returncode == 0, completed.stderr
    out = json.loads(completed.stdout)
    assert out["listed"] == 128
    assert out["value"] == "v3_5"
    assert len(out["refused"]) == 3
    assert all("keyring entry janito/__janito_secret_names__" in r for r in out["refused"])
    assert out["index"] == '["t0_0", "t0_1"'
    assert out["fresh"] is False and out["t0_0"] is True
