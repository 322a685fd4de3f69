"""What the tests of every framework share: a registry of three small tools, its policy
and journal, and a look at what janito logged of each call.

The registry offers the tools of janito_notes: a read tool (CountLetters), a write tool
(WriteNote) and a tool that runs something (RunCheck). Its policy is the ``ask`` mode,
so RunCheck (``x``) asks a person; the tools are handed to the framework with every
privilege, and then the person takes ``w`` away, so WriteNote is refused when the model
calls it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from janito_notes import _runs
from janito_notes.count_letters import CountLetters
from janito_notes.run_check import RunCheck
from janito_notes.write_note import WriteNote

from janito_core import Privileges, Registry, Workspace
from janito_core.journal import Journal

#: What RunCheck ran, in order: a declined call must leave nothing here.
RUNS = _runs.RUNS


class Setup:
    """The registry under test, with where its journal is."""

    def __init__(self, tmp_path: Path) -> None:
        folder = tmp_path / "workspace"
        folder.mkdir()
        self.journal = Journal(tmp_path / "journal")
        self.registry = Registry(autoload=(), workspace=Workspace(str(folder)),
                                 policy={"mode": "ask"}, journal=self.journal, reports="off")
        for cls in (CountLetters, WriteNote, RunCheck):
            self.registry.add_tool(cls, toolset="notes")
        RUNS.clear()

    def take_w_away(self) -> None:
        """The person takes write permission away once the tools were handed over."""
        self.registry.privileges = Privileges.from_string("rx")

    def audit(self) -> list[dict[str, Any]]:
        """The audit log's lines, oldest first."""
        return list(self.journal.audit_log.lines())

    def callers(self) -> set[str]:
        """Who made the logged calls (``caller.kind``)."""
        return {line["caller"]["kind"] for line in self.audit()}

    def outcomes(self) -> list[tuple[str, Any, Any]]:
        """(tool, error_type, approved) of every logged call, in a fixed order (the calls
        of one turn may be logged in any order)."""
        return sorted(((line["tool"], line.get("error_type"), line.get("approved"))
                       for line in self.audit()), key=repr)

    def assert_conversation_logged(self, caller: str) -> None:
        """What the conversation every framework's test holds leaves behind: the approved
        check ran, the declined one did not, and janito logged the four calls as
        ``caller``'s."""
        assert RUNS == ["lint"]
        assert self.outcomes() == EXPECTED_OUTCOMES
        assert self.callers() == {caller}


#: What janito logs of the conversation every test holds: the read, the refused write,
#: the asked call approved, the asked call declined.
EXPECTED_OUTCOMES = sorted([
    ("CountLetters", None, None),
    ("WriteNote", "permission_denied", None),
    ("RunCheck", None, True),
    ("RunCheck", "approval_declined", False),
], key=repr)


# A tool whose result is a pydantic model: janito answers the model's JSON object, with
# ``success`` (docs/dispatch.md).
EXPECTED_FORECAST = {"success": True, "city": "Lisbon",
                     "days": [{"date": "2026-12-07", "high_c": 15.5},
                              {"date": "2026-12-08", "high_c": 14.0}]}


def forecast_registry(tmp_path: Path) -> Registry:
    """A registry holding GetForecast, whose result is a pydantic model."""
    from janito_notes.forecast import GetForecast

    registry = Registry(autoload=(), workspace=Workspace(str(tmp_path)), reports="off")
    registry.add_tool(GetForecast, toolset="notes")
    return registry


def parsed(content: Any) -> dict[str, Any]:
    """A tool's answer as the model read it: janito's JSON object."""
    value = json.loads(content) if isinstance(content, str) else content
    assert isinstance(value, dict), content
    return value
