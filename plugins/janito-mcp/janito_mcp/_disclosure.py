"""What a client of ``janito mcp serve`` is told of the host that serves it.

A failure's text is written for the person at the machine: ``janito run`` names the file a
toolset could not read, the command a mounted server was started with, what that server
said on stderr. A client of the server is someone else, on another machine, so an
``unknown_tool`` answer reaches it with the load failures behind it reduced to what
janito can vouch carries nothing of the host: which toolset failed, in which
distribution, the kind of failure, and for an import the module and the exception's
type (and the module that was missing). The rest is said on the server, where ``janito
tools`` and the server's start-up lines show it whole.
"""

from __future__ import annotations

import re
from typing import Any

_IMPORT = re.compile(r"cannot import ([\w.]+): ([A-Za-z_]\w*)(?=[:\s(]|$)")
_MISSING = re.compile(r"No module named '([\w.]+)'")
#: Kinds whose reason janito builds from tool, toolset and distribution names only.
_NAMES_ONLY = ("empty", "clash")


def for_client(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as a client of the server may see it (the same object when it holds
    nothing of the host's)."""
    failures = result.get("load_errors")
    if result.get("success") is not False or not isinstance(failures, list):
        return result
    error = str(result.get("error", ""))
    told = []
    for failure in failures:
        if not isinstance(failure, dict):
            continue
        reason = str(failure.get("reason") or "")
        said = client_reason(failure)
        if reason:
            error = error.replace(reason, said)
        told.append({**failure, "reason": said})
    return {**result, "error": error, "load_errors": told}


def client_reason(failure: dict[str, Any]) -> str:
    """The reason of one load failure as a client may read it."""
    reason = str(failure.get("reason") or "")
    kind = failure.get("kind")
    if kind in _NAMES_ONLY:
        return reason
    toolset = failure.get("toolset")
    on_server = (f"the rest is said on the server (janito tools -t {toolset})" if toolset
                 else "the rest is said on the server (janito tools)")
    if kind == "import":
        found = _IMPORT.match(reason)
        if found is not None:
            missing = _MISSING.search(reason) if found.group(2) == "ModuleNotFoundError" else None
            said = f"cannot import {found.group(1)}: {found.group(2)}"
            if missing is not None:
                return f"{said}: No module named {missing.group(1)!r}"
            return f"{said}; {on_server}"
    return f"it failed to load; {on_server}"
