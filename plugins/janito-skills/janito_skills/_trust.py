"""Which project folders the user trusts to offer their skills.

A skill is instructions a model follows, and its resources can be scripts the model is
told to run: a cloned repository must not bring skills a model acts on before the user
has said yes. So the skills of a project (its ``.janito/skills``, ``.agents/skills`` and
``.claude/skills``) are offered only once the user has trusted the project's folder, with
``janito skills trust``; trusting a folder trusts the folders below it too.

The trusted folders are kept, as real absolute paths, in ``trusted-skill-folders.json`` in
janito's configuration folder (``JANITO_CONFIG_DIR``, else ``~/.config/janito``), written
atomically and readable by the user alone. A file that cannot be read trusts nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TRUST_FILE = "trusted-skill-folders.json"


def trust_file() -> Path:
    from janito_core.secrets import config_dir

    return Path(config_dir()) / TRUST_FILE


def trusted_folders() -> list[str]:
    """The trusted folders, as recorded (an unreadable or malformed file: none)."""
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    folders = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(folders, list):
        return []
    return [f for f in folders if isinstance(f, str) and os.path.isabs(f)]


def _real(folder: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(folder))


def is_trusted(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is a trusted folder or lies below one."""
    real = _real(folder)
    for trusted in trusted_folders():
        if real == trusted or real.startswith(trusted.rstrip(os.sep) + os.sep):
            return True
    return False


def _write(folders: list[str]) -> None:
    from janito_core.config import write_private

    text = json.dumps({"trusted": sorted(set(folders))}, indent=2) + "\n"
    write_private(trust_file(), text.encode("utf-8"))


def trust(folder: str | os.PathLike[str]) -> bool:
    """Trust ``folder``; whether it was not trusted before."""
    real = _real(folder)
    folders = trusted_folders()
    if real in folders:
        return False
    _write([*folders, real])
    return True


def untrust(folder: str | os.PathLike[str]) -> bool:
    """Stop trusting ``folder`` itself; whether it was trusted."""
    real = _real(folder)
    folders = trusted_folders()
    if real not in folders:
        return False
    _write([f for f in folders if f != real])
    return True
