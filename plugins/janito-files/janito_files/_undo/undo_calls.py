"""UndoCalls: put back what the caller's own newest calls changed."""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from janito_core import BaseTool, Failure, WorkspaceError, failure, tool
from janito_core.constraints import Interval
from janito_core.errors import JournalError

from .._common import TypedDict

MAX_CALLS = 20


class UndoneCall(TypedDict):
    """One call taken back.

    Attributes:
        tool: The tool that was called.
        paths: The paths it changed, relative to the workspace.
    """

    tool: str
    paths: list[str]


class UndoStep(TypedDict):
    """One path put back.

    Attributes:
        path: The path, relative to the workspace.
        action: What putting it back does to it.
    """

    path: str
    action: str


class UndoneCalls(TypedDict):
    """What UndoCalls answers.

    Attributes:
        dry_run: True when nothing was changed, only said.
        undone: The calls taken back, newest first.
        steps: What was (or, in a dry run, would be) done to each path.
    """

    success: Literal[True]
    dry_run: bool
    undone: list[UndoneCall]
    steps: list[UndoStep]


@tool(permissions="w")
class UndoCalls(BaseTool):
    """Put back what your own most recent tool calls changed in the workspace.

    The newest of your calls that changed something are undone, newest first, from the
    journal janito keeps: files, folders, links and what code changed, byte for byte. It
    refuses, naming the path, when anything else changed such a path since; nothing is
    then changed. An undo is itself recorded: calling this again takes it back.
    """

    def run(self, count: Annotated[int, Interval(ge=1, le=MAX_CALLS)] = 1,
            dry_run: bool = False) -> UndoneCalls | Failure:
        """Undo your newest calls.

        Args:
            count: How many of your newest calls that changed something to undo.
            dry_run: Say what would be put back and change nothing.
        """
        recording = self.workspace.recording
        if recording is None:
            return failure("nothing can be undone: this janito keeps no journal of its "
                           "changes", "not_journaled")
        journal, caller = recording.journal, recording.header.get("caller")
        mine = [entry for entry in journal.entries(self.workspace.root)
                if entry.header.get("caller") == caller][:count]
        if not mine:
            return failure("none of your calls changed anything here that can be undone",
                           "nothing_to_undo")
        self.report_start(f"Undoing {len(mine)} call{'s' if len(mine) > 1 else ''}")
        try:
            plan = journal.undo([entry.id for entry in mine], dry_run=dry_run,
                                caller=caller, workspace=self.workspace)
        except WorkspaceError as exc:
            return failure(f"refused: {exc.reason}", exc.error_type)
        except JournalError as exc:
            return failure(f"nothing was undone: {exc}", "undo_refused", path=exc.path)
        except OSError as exc:
            return failure(f"the undo stopped part way ({exc.strerror or exc}); what it "
                           "did is recorded and can be undone", "undo_failed")
        self.report_result(f"Undid {len(mine)} call{'s' if len(mine) > 1 else ''}")
        return {"success": True, "dry_run": dry_run,
                "undone": [{"tool": entry.tool, "paths": entry.paths} for entry in mine],
                "steps": [{"path": path, "action": action}
                          for _, path, action in plan.steps]}


def main(argv: list[str] | None = None) -> int:
    """Run UndoCalls from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(UndoCalls, argv)


if __name__ == "__main__":
    sys.exit(main())
