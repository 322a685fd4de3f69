"""ReadSkillResource: one file from inside a skill's folder, and nothing outside it."""

from __future__ import annotations

import os
import stat
from typing import Any

from janito_core import BaseTool, tool

from ._index import discover, display, missing_skill
from ._resources import ResourceError, resolve_resource

DEFAULT_MAX_BYTES = 100_000
LIMIT_MAX_BYTES = 5_000_000


@tool(permissions="r")
class ReadSkillResource(BaseTool):
    """Read a resource file of a skill (a path LoadSkill listed), confined to the skill's folder."""

    def run(self, skill_name: str, resource_path: str,
            max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
        """Read one file inside the folder of skill ``skill_name``.

        Args:
            skill_name: The skill's name, as ListSkills shows it.
            resource_path: The file's path relative to the skill's folder, such as
                "references/forms.md"; absolute paths, ".." and links leading out are refused.
            max_bytes: Read at most this many bytes of the file (1 to 5000000).
        """
        from janito_core.dispatch import failure

        echo = {"skill_name": skill_name, "resource_path": resource_path}
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) \
                or not 1 <= max_bytes <= LIMIT_MAX_BYTES:
            return failure(f"max_bytes must be an integer from 1 to {LIMIT_MAX_BYTES}.",
                           "invalid_arguments", **echo)
        root = self.workspace.root
        index = discover(root)
        skill = index.get(skill_name)
        if skill is None:
            return {**missing_skill(index, skill_name), **echo}
        try:
            real = resolve_resource(skill.folder, resource_path)
        except ResourceError as exc:
            return failure(f"{exc}.", exc.error_type, **echo)
        real_folder = os.path.realpath(skill.folder)
        if os.path.isdir(real):
            return failure(f"{resource_path!r} is a folder of skill {skill_name!r}, not a file.",
                           "is_directory", **echo)
        try:
            data, size = _read_regular_file(real, max_bytes + 1)
        except _NotRegular:
            return failure(f"{resource_path!r} is not a regular file.", "not_a_file", **echo)
        except FileNotFoundError:
            return failure(f"Skill {skill_name!r} has no file {resource_path!r}.", "not_found",
                           **echo)
        except OSError as exc:
            return failure(f"{resource_path!r} cannot be read: {exc.strerror or exc}.",
                           "read_error", **echo)
        truncated = len(data) > max_bytes
        data = data[:max_bytes]
        content, encoding = _decode(data, truncated)
        self.report_result(f"Read {resource_path} of skill {skill_name} ({len(data)} bytes)")
        return {
            "success": True,
            **echo,
            "path": display(os.path.join(skill.folder, os.path.relpath(real, real_folder)), root),
            "encoding": encoding,
            "content": content,
            "size": size,
            "truncated": truncated,
        }


class _NotRegular(Exception):
    pass


def _read_regular_file(real: str, limit: int) -> tuple[bytes, int]:
    """At most ``limit`` bytes of a regular file, and its size; a FIFO or device never blocks.

    The resolved path is opened without following a final link, so a file swapped for a
    link after the confinement check is not read through it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(real, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _NotRegular(real)
        chunks: list[bytes] = []
        remaining = limit
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), info.st_size
    finally:
        os.close(fd)


def _decode(data: bytes, truncated: bool) -> tuple[str, str]:
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
