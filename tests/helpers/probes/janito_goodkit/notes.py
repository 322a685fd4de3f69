"""Function tools: workspace, reporter and cancellation asked for by type (no main())."""

from __future__ import annotations

from typing import Any

from janito_core import CancelToken, Reporter, Workspace, WorkspaceError, failure, tool


@tool(permissions="w")
def save_note(name: str, text: str, workspace: Workspace, reporter: Reporter) -> dict[str, Any]:
    """Save a note in the workspace, replacing one of the same name.

    Args:
        name: The note's path, relative to the workspace.
        text: What the note says.
    """
    try:
        replaced = workspace.write_file(name, text.encode("utf-8", "replace"), overwrite=True)
    except WorkspaceError as exc:
        return failure(str(exc), exc.error_type, name=name)
    except OSError as exc:
        return failure(f"cannot save {name}: {exc.strerror or exc}", "os_error", name=name)
    reporter.report_result(f"saved {name}")
    return {"success": True, "name": name, "replaced": replaced}


@tool(permissions="r")
def list_notes(workspace: Workspace, cancel_token: CancelToken | None = None,
               suffix: str = ".txt") -> dict[str, Any]:
    """List the notes of the workspace.

    Args:
        suffix: Only names ending with this.
    """
    names = []
    for entry in workspace.walk("."):
        if cancel_token is not None and cancel_token.cancelled:
            return failure("cancelled", "cancelled")
        if entry.kind == "file" and entry.relative.endswith(suffix):
            names.append(entry.relative)
    return {"success": True, "suffix": suffix, "notes": names}
