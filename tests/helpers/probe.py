"""Run in a child interpreter by ``distributions.probe``: build a Registry, report as JSON.

argv[1] is a JSON request (see ``probe``). The report goes to stdout after a marker line,
so whatever a toolset prints while being imported cannot corrupt it.
"""

from __future__ import annotations

import json
import site
import sys

MARKER = "@@janito-probe@@"


def main() -> None:
    request = json.loads(sys.argv[1])
    for folder in request["sitedirs"]:
        site.addsitedir(folder)

    from janito_core import Privileges, Registry, Workspace
    from janito_core.dispatch import call_tool

    privileges = request["privileges"]
    workspace = request["workspace"]
    registry = Registry(
        privileges=None if privileges is None else Privileges.from_string(privileges),
        workspace=None if workspace is None else Workspace(workspace),
        autoload=None if request["autoload"] is None else tuple(request["autoload"]),
    )
    added: dict[str, object] = {}
    for name in request["add"]:
        try:
            added[name] = {"tools": registry.add_toolset(name)}
        except Exception as exc:
            added[name] = {"exception": type(exc).__name__, "message": str(exc)}
    calls = [call_tool(name, arguments, registry=registry) for name, arguments in request["calls"]]
    report = {
        "toolsets": {name: spec._asdict() for name, spec in registry.toolsets().items()},
        "loaded_toolsets": registry.loaded_toolsets(),
        "records": [record.as_row() for record in registry.records()],
        "errors": [dict(error._asdict(), row=error.as_row()) for error in registry.load_errors],
        "warnings": list(registry.warnings),
        "added": added,
        "calls": calls,
        "plugins": registry.plugins.names() if registry.plugins.active else None,
        "modules": sorted(m for m in sys.modules if m.startswith(("acme", "janito_"))),
    }
    sys.stdout.write("\n" + MARKER + json.dumps(report))


if __name__ == "__main__":
    main()
