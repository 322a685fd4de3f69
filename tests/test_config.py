"""janito_core.config: the configuration folder and private files written in one step."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from janito_core.config import config_dir, write_private


def test_config_dir_prefers_janito_config_dir_then_xdg(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("JANITO_CONFIG_DIR", str(tmp_path / "explicit"))
    assert config_dir() == tmp_path / "explicit"
    monkeypatch.delenv("JANITO_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir() == tmp_path / "xdg" / "janito"


def test_a_private_file_is_the_owners_alone_whatever_the_umask_or_the_old_mode(
        tmp_path: Path) -> None:
    target = tmp_path / "made" / "here" / "settings.json"
    old = os.umask(0)
    try:
        write_private(target, b"one")
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        target.chmod(0o644)
        write_private(target, b"two")
    finally:
        os.umask(old)
    assert target.read_bytes() == b"two"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["settings.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    write_private(target, b"kept")
    (tmp_path / "blocker").mkdir()
    (tmp_path / "blocker" / "inside").write_text("x")
    with pytest.raises(OSError):
        write_private(tmp_path / "blocker", b"cannot replace a folder that holds files")
    assert target.read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "settings.json"]


def test_writers_in_threads_never_leave_a_mixed_file(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    payloads = [json.dumps({"writer": n, "fill": str(n) * 50_000}).encode() for n in range(8)]
    errors: list[BaseException] = []

    def write(payload: bytes) -> None:
        try:
            for _ in range(10):
                write_private(target, payload)
        except BaseException as exc:  # reported below, with the thread's own error
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert target.read_bytes() in payloads
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
