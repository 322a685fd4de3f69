"""A tool whose parameter takes any path, the root and the home folder too: the kit must
never hand it one that leads above its own folders, where a tool that acts on the path it
is given (deletes it, say) would act on the author's machine."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

from janito_core import tool
from janito_core.constraints import Pattern


@tool(permissions="r")
def locate(path: Annotated[str, Pattern(r"^[/~.]{1,6}$")]) -> dict[str, Any]:
    """Say which path was named.

    Args:
        path: Any path.
    """
    log = os.environ.get("JANITO_PROBE_CALLS")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps([os.getcwd(), path]) + "\n")
    return {"success": True, "path": path}
