"""The secrets store: environment overrides, the private file store, the keyring store."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from helpers.distributions import run_python, write_files

from janito_core.secrets import (
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


def test_a_corrupt_store_reads_as_empty(isolated: Path) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "secrets.json").write_text("{not json", encoding="utf-8")
    assert get_secret("anything") is None
    assert list_secrets() == []
    set_secret("fresh", "v")
    assert get_secret("fresh") == "v"


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
