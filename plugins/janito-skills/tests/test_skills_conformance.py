"""The toolset passes janito-core's conformance check."""

from __future__ import annotations

from pathlib import Path

from janito_core.testing import check_toolset


def test_skills_toolset_conforms(janito_isolated: Path) -> None:
    report = check_toolset("skills", privileges="r")
    assert report.tools == ["ListSkills", "LoadSkill", "ReadSkillResource"]
    assert report.calls_made > 0
