"""ReadSkillResource: one file from inside a skill's folder, and nothing outside it."""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from janito_core import BaseTool, Failure, WorkspaceError, tool
from janito_core.constraints import Interval, Pattern
from janito_core.results import counted

from ._index import TypedDict, discover, display, missing_skill
from ._resources import ResourceError, clean_resource_path, refused

DEFAULT_MAX_BYTES = 100_000
LIMIT_MAX_BYTES = 5_000_000


class SkillResource(TypedDict):
    """What ReadSkillResource answers.

    Attributes:
        skill_name: The skill, as given.
        resource_path: The file, as given.
        path: The file as it was found.
        encoding: "utf-8" for text, "base64" for other bytes.
        content: The file's content (at most max_bytes of it), in that encoding.
        size: The file's size in bytes.
        truncated: Whether the content stops at max_bytes.
    """

    success: Literal[True]
    skill_name: str
    resource_path: str
    path: str
    encoding: Literal["utf-8", "base64"]
    content: str
    size: int
    truncated: bool


@tool(permissions="r")
class ReadSkillResource(BaseTool):
    """Read a resource file of a skill (a path LoadSkill listed), confined to the skill's folder."""

    @classmethod
    def refine_schema(cls, schema: Any, registry: Any) -> Any:
        """``skill_name`` limited to the skills available in the registry's workspace."""
        from ._catalog import refine

        return refine(schema, registry, "skill_name", listing=False)

    def run(self, skill_name: str,
            resource_path: Annotated[str, Pattern(r"^[^\x00]*[^\s\x00][^\x00]*$")],
            max_bytes: Annotated[int, Interval(ge=1, le=LIMIT_MAX_BYTES)] = DEFAULT_MAX_BYTES,
            ) -> SkillResource | Failure:
        """Read one file inside the folder of skill ``skill_name``.

        Args:
            skill_name: The skill's name, as ListSkills shows it.
            resource_path: The file's path relative to the skill's folder, such as
                "references/forms.md"; absolute paths, ".." and links leading out are refused.
            max_bytes: Read at most this many bytes of the file.
        """
        from janito_core.dispatch import failure
        from janito_core.workspace import NotRegularFile, read_fd

        resource = resource_path
        echo = {"skill_name": skill_name, "resource_path": resource}
        root = self.workspace.root
        index = discover(self.workspace)
        skill = index.get(skill_name)
        if skill is None:
            return missing_skill(index, skill_name, **echo)
        try:
            relative = clean_resource_path(resource)
        except ResourceError as exc:
            return failure(f"{exc}.", exc.error_type, **echo)
        try:
            folder = skill.open_folder()
        except (OSError, WorkspaceError) as exc:
            reason = exc.reason if isinstance(exc, WorkspaceError) else exc.strerror or exc
            return failure(f"The folder of skill {skill_name!r} cannot be opened ({reason}).",
                           "invalid_skill", **echo)
        try:
            with folder:
                fd, info, shown = folder.open_regular(relative)
        except WorkspaceError as exc:
            problem = refused(exc)
            return failure(f"{problem}.", problem.error_type, **echo)
        except IsADirectoryError:
            return failure(f"{resource!r} is a folder of skill {skill_name!r}, not a file.",
                           "is_directory", **echo)
        except NotRegularFile:
            return failure(f"{resource!r} is not a regular file.", "not_a_file", **echo)
        except (FileNotFoundError, NotADirectoryError):
            return failure(f"Skill {skill_name!r} has no file {resource!r}.", "not_found",
                           **echo)
        except OSError as exc:
            return failure(f"{resource!r} cannot be read: {exc.strerror or exc}.",
                           "read_error", **echo)
        try:
            data = read_fd(fd, info.st_size, max_bytes + 1)
        except OSError as exc:
            return failure(f"{resource!r} cannot be read: {exc.strerror or exc}.",
                           "read_error", **echo)
        finally:
            os.close(fd)
        truncated = len(data) > max_bytes
        data = data[:max_bytes]
        content, encoding = _decode(data, truncated)
        self.report_result(f"Read {resource} of skill {skill_name} ({counted(len(data), 'byte')})")
        return {
            "success": True,
            "skill_name": skill_name,
            "resource_path": resource,
            "path": display(os.path.join(skill.folder, shown), root),
            "encoding": encoding,
            "content": content,
            "size": info.st_size,
            "truncated": truncated,
        }


def _decode(data: bytes, truncated: bool) -> tuple[str, Literal["utf-8", "base64"]]:
    """UTF-8 text when the bytes are text (a cut multi-byte tail dropped), else base64."""
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        if truncated and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8", "replace"), "utf-8"
    import base64

    return base64.b64encode(data).decode("ascii"), "base64"


def main(argv: list[str] | None = None) -> int:
    """Run ReadSkillResource from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(ReadSkillResource, argv)


if __name__ == "__main__":
    main()
