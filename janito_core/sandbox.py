"""The sandbox policy for code that tools run, as the user set it.

Tools that execute code (``x`` tools) run it under one of four policies:

- ``read-only``: everything is readable; nothing can be written except the call's own
  temporary folder (its ``TMPDIR``); no network.
- ``workspace-write`` (the default): as ``read-only``, and the workspace is writable.
- ``workspace-write+network``: as ``workspace-write``, with the network.
- ``off``: no filesystem or network restriction. The processes a call starts still end
  with the call.

The user sets the policy in one place, read in this order: the ``janito --sandbox POLICY``
option (which sets ``JANITO_SANDBOX`` for the process, so ``janito mcp serve`` and every
other command see it), the ``JANITO_SANDBOX`` environment variable, the ``"sandbox"`` key
of ``config.json`` in janito's configuration folder, else the default. This module only
says which policy is asked for; the toolset that runs code enforces it (janito-system
with bubblewrap or Landlock) and fails closed when it cannot.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from .config import config_dir

READ_ONLY = "read-only"
WORKSPACE_WRITE = "workspace-write"
WORKSPACE_WRITE_NETWORK = "workspace-write+network"
OFF = "off"

POLICIES: tuple[str, ...] = (READ_ONLY, WORKSPACE_WRITE, WORKSPACE_WRITE_NETWORK, OFF)
DEFAULT_POLICY = WORKSPACE_WRITE
ENV_VAR = "JANITO_SANDBOX"
CONFIG_FILE = "config.json"
CONFIG_KEY = "sandbox"

DESCRIPTIONS = {
    READ_ONLY: "reads anywhere; writes only in the call's temporary folder; no network",
    WORKSPACE_WRITE: "reads anywhere; writes only in the workspace and the call's temporary "
                     "folder; no network",
    WORKSPACE_WRITE_NETWORK: "reads anywhere; writes only in the workspace and the call's "
                             "temporary folder; network allowed",
    OFF: "no filesystem or network restriction",
}


class SandboxPolicyError(ValueError):
    """The configured policy is not one of :data:`POLICIES`, or its file cannot be read."""


class SandboxPolicy(NamedTuple):
    """The policy in force and where it was set (``default``, ``JANITO_SANDBOX`` or a file)."""

    name: str
    source: str

    @property
    def confined(self) -> bool:
        """Whether files and network are restricted (every policy but ``off``)."""
        return self.name != OFF

    @property
    def workspace_writable(self) -> bool:
        return self.name != READ_ONLY

    @property
    def network(self) -> bool:
        return self.name in (WORKSPACE_WRITE_NETWORK, OFF)


def check_policy(value: str, source: str) -> SandboxPolicy:
    """``value`` as a policy; SandboxPolicyError naming ``source`` when it is not one."""
    name = value.strip().lower()
    if name not in POLICIES:
        raise SandboxPolicyError(
            f"{source} sets the sandbox policy {value!r}, which is not one of "
            f"{', '.join(POLICIES)}"
        )
    return SandboxPolicy(name, source)


def sandbox_policy() -> SandboxPolicy:
    """The policy in force for this process (read anew on every call: it is cheap).

    Raises SandboxPolicyError for a value that is not a policy or a configuration file
    that cannot be read; whoever enforces the policy must then refuse to run code.
    """
    value = os.environ.get(ENV_VAR)
    if value:
        return check_policy(value, ENV_VAR)
    path = config_dir() / CONFIG_FILE
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return SandboxPolicy(DEFAULT_POLICY, "default")
    except OSError as exc:
        raise SandboxPolicyError(f"cannot read {path}: {exc.strerror or exc}") from None
    import json

    try:
        settings = json.loads(data)
    except ValueError as exc:
        raise SandboxPolicyError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(settings, dict):
        raise SandboxPolicyError(f"{path} must hold a JSON object")
    value = settings.get(CONFIG_KEY)
    if value is None:
        return SandboxPolicy(DEFAULT_POLICY, "default")
    if not isinstance(value, str):
        raise SandboxPolicyError(f'"{CONFIG_KEY}" in {path} must be a string, one of '
                                 f"{', '.join(POLICIES)}")
    return check_policy(value, str(path))


def how_to_set(policy: str) -> str:
    """How the user selects ``policy``, for messages that suggest it."""
    return f"janito --sandbox {policy}, or {ENV_VAR}={policy}"
