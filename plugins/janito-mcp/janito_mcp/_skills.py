"""The skills of the ``skills`` toolset (janito-skills) as MCP resources under ``skill://``.

The MCP Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``) serves each file
of a skill as a resource ``skill://<name>/<path>`` and adds ``skills/list`` and
``skills/get``. The MCP SDK janito-mcp is built on (2.3) does not implement that
extension, so janito serves its resource mapping alone, with the base protocol's
methods, and does not declare the extension:

- ``resources/list``: one ``skill://<name>/SKILL.md`` per skill offered here (name and
  description from its front matter, ``text/markdown``);
- ``resources/templates/list``: ``skill://{name}/SKILL.md`` and ``skill://{name}/{+path}``
  for the skill's other files;
- ``resources/read``: one file, as text (UTF-8) or as a blob (base64).

Nothing here reads a file: every list and read is a call of the toolset's own tools
(``ListSkills``, ``ReadSkillResource``) through janito's dispatch, so which skills are
offered (project skills only once trusted, precedence), the confinement of a read to the
skill's folder, privileges, policy and the audit log are exactly theirs. janito-mcp
depends on no other distribution: it finds the tools by name in the registry it serves,
and serves no resources when they are not there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, unquote, urlsplit

LIST_TOOL = "ListSkills"
READ_TOOL = "ReadSkillResource"
SCHEME = "skill"
SKILL_FILE = "SKILL.md"
#: The most a read returns (ReadSkillResource's own ceiling); a larger file is an error.
MAX_BYTES = 5_000_000

Call = Callable[[Any, str, dict[str, Any]], Awaitable[dict[str, Any]]]


def serves_skills(tools: Any) -> bool:
    """Whether the tools served (names) include what skill resources are made from."""
    return LIST_TOOL in tools and READ_TOOL in tools


def skill_uri(name: str, path: str = SKILL_FILE) -> str:
    """``skill://<name>/<path>``; characters a URI authority or path cannot hold are
    percent-encoded (the Agent Skills naming rule leaves none in a well-formed name)."""
    return f"{SCHEME}://{quote(name, safe='')}/{quote(path, safe='/')}"


def parse_uri(uri: str) -> tuple[str, str] | None:
    """(skill name, file path) of a ``skill://`` URI, or None."""
    parts = urlsplit(uri)
    if parts.scheme != SCHEME or not parts.netloc or parts.query or parts.fragment:
        return None
    path = unquote(parts.path.lstrip("/"))
    return (unquote(parts.netloc), path) if path else None


class SkillResources:
    """The three resource handlers, calling tools through ``call(ctx, tool, arguments)``."""

    def __init__(self, call: Call) -> None:
        self.call = call

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        result = await self.call(ctx, LIST_TOOL, {})
        if not result.get("success"):
            raise _error(result)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=skill_uri(row["name"]), name=row["name"],
                           description=row.get("description"), mime_type="text/markdown")
            for row in result.get("skills", []) if isinstance(row, dict) and row.get("name")])

    async def list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(
                uri_template=f"{SCHEME}://{{name}}/{SKILL_FILE}", name="skill",
                description="A skill's instructions: its SKILL.md (resources/list lists "
                "the skills offered)", mime_type="text/markdown"),
            types.ResourceTemplate(
                uri_template=f"{SCHEME}://{{name}}/{{+path}}", name="skill-file",
                description="A file of a skill, by its path relative to the skill's folder "
                "(its SKILL.md names the ones it uses)"),
        ])

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        import mimetypes

        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        parsed = parse_uri(uri)
        if parsed is None:
            raise MCPError(types.INVALID_PARAMS, f"no resource {uri!r}: this server serves "
                           f"{SCHEME}://<skill name>/<file path> only")
        name, path = parsed
        result = await self.call(ctx, READ_TOOL, {"skill_name": name, "resource_path": path,
                                                  "max_bytes": MAX_BYTES})
        if not result.get("success"):
            raise _error(result)
        if result.get("truncated"):
            raise MCPError(types.INVALID_PARAMS, f"{uri} is larger than {MAX_BYTES} bytes, "
                           "more than a resource read returns",
                           {"size": result.get("size")})
        if path == SKILL_FILE:
            mime = "text/markdown"
        else:
            mime = mimetypes.guess_type(path)[0] or (
                "text/plain" if result.get("encoding") == "utf-8" else "application/octet-stream")
        content = str(result.get("content", ""))
        if result.get("encoding") == "base64":
            return types.ReadResourceResult(contents=[
                types.BlobResourceContents(uri=uri, mime_type=mime, blob=content)])
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, mime_type=mime, text=content)])


def _error(result: dict[str, Any]) -> Exception:
    """The MCP error for a failed tool call: an unknown skill or file, or a refused one,
    is the client's (invalid params, as the 2026-07-28 revision answers a resource not
    found); the rest the server's. The janito failure travels as the error's data."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    internal = result.get("error_type") in ("tool_exception", "plugin_error", "invalid_result")
    code = types.INTERNAL_ERROR if internal else types.INVALID_PARAMS
    return MCPError(code, str(result.get("error") or "the skill cannot be read"), result)
