"""janito-skills over MCP: ``janito mcp serve -t skills`` serves each skill's files as
``skill://`` resources (the Skills extension's resource mapping), read through the skills
toolset's own tools, and the SDK's client lists and reads them.

Needs janito-mcp and janito-skills installed (``nox -s tests-integration``).
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("janito_mcp")
pytest.importorskip("janito_skills")

SKILL = """---
name: pdf-forms
description: Fill PDF forms. Use when the user mentions a PDF form.
---
# Filling PDF forms

Read `references/fields.md` first.
"""
LOGO = b"\x89PNG\r\n\x1a\n\xff\x00binary"


def _skills(config: Path, workspace: Path) -> None:
    folder = config / "skills" / "pdf-forms"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (folder / "references" / "fields.md").write_text("name, date\n", encoding="utf-8")
    (folder / "logo.png").write_bytes(LOGO)
    (config / "secret.txt").write_text("not a skill's", encoding="utf-8")
    # a project's skill, not offered until the person trusts the project
    project = workspace / ".agents" / "skills" / "cloned"
    project.mkdir(parents=True)
    (project / "SKILL.md").write_text(SKILL.replace("pdf-forms", "cloned"), encoding="utf-8")


def test_skills_are_served_as_skill_resources(isolated: Path, tmp_path: Path) -> None:
    import anyio
    import mcp_types
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    _skills(isolated, workspace)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "janito_mcp", "serve", "-t", "skills"],
        cwd=str(workspace), env=dict(os.environ))

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with Client(stdio_client(params)) as client:
            seen["capabilities"] = client.server_capabilities
            seen["listed"] = (await client.list_resources()).resources
            seen["templates"] = (await client.list_resource_templates()).resource_templates
            for uri in ("skill://pdf-forms/SKILL.md", "skill://pdf-forms/references/fields.md",
                        "skill://pdf-forms/logo.png"):
                seen[uri] = (await client.read_resource(uri)).contents[0]
            for uri in ("skill://pdf-forms/../secret.txt", "skill://pdf-forms/missing.md",
                        "skill://cloned/SKILL.md", "skill://nope/SKILL.md",
                        "file:///etc/passwd"):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                seen[uri] = refused.value
            with pytest.raises(MCPError) as refused:
                await client.list_prompts()
            seen["prompts"] = refused.value.code
        return seen

    seen = anyio.run(main)
    assert seen["capabilities"].resources is not None
    assert seen["capabilities"].prompts is None and seen["prompts"] == mcp_types.METHOD_NOT_FOUND
    [listed] = seen["listed"]  # the untrusted project skill is not offered
    assert (listed.uri, listed.name, listed.mime_type) == (
        "skill://pdf-forms/SKILL.md", "pdf-forms", "text/markdown")
    assert listed.description == "Fill PDF forms. Use when the user mentions a PDF form."
    assert {t.uri_template for t in seen["templates"]} == {"skill://{name}/SKILL.md",
                                                           "skill://{name}/{+path}"}
    assert seen["skill://pdf-forms/SKILL.md"].text == SKILL
    assert seen["skill://pdf-forms/references/fields.md"].text == "name, date\n"
    logo = seen["skill://pdf-forms/logo.png"]
    assert logo.mime_type == "image/png" and base64.b64decode(logo.blob) == LOGO
    for uri, kind in (("skill://pdf-forms/../secret.txt", "outside_skill"),
                      ("skill://pdf-forms/missing.md", "not_found"),
                      ("skill://cloned/SKILL.md", None), ("skill://nope/SKILL.md", None)):
        error = seen[uri]
        assert error.code == mcp_types.INVALID_PARAMS, uri
        assert error.data["success"] is False and error.message == error.data["error"], uri
        if kind:
            assert error.data["error_type"] == kind, (uri, error.data)
    assert "not a skill's" not in str(seen["skill://pdf-forms/../secret.txt"].data)
    assert seen["file:///etc/passwd"].code == mcp_types.INVALID_PARAMS
