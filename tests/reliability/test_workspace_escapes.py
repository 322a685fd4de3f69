"""The workspace boundary: every tool that takes a path, tried with every way out.

Layout of each test's temporary folder::

    ws/                      the workspace (probe.txt, sub/, a skill, hello.py, odd names)
      link-out -> ../outside            a symbolic link to a folder outside
      secret-link.txt -> ../outside/sentinel-secret.txt
      loop -> loop, ping -> pong -> ping    symbolic link loops
      hard.txt                           a hard link to ../outside/hardlinked.txt
      b'\\xfflink' -> ../outside         a link whose name is not UTF-8
    outside/                 the sentinel tree (names start with "sentinel-")
    cwd/                     the current directory (outside the workspace as well)

Every path parameter of every tool (files, RunPythonFile and the working directory of the
executing tools, skills resources, gmail SaveAttachment, onedrive download and upload) is
sent ``..`` climbs, absolute paths, links leading out, link loops, NUL characters, very
long paths and names that are not UTF-8. Afterwards nothing outside the workspace has
changed (kind, size, mtime, mode, content hash of every entry), no result shows the
sentinel text or the name of an outside entry that the path did not itself contain, the
loopback Graph server never received the sentinel, and a refused path is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

from janito_core.dispatch import call_tool, execute_tool_calls

DEEP = "d/" * 3000 + "x"
"""Longer than PATH_MAX, yet inside: walked one component at a time from a descriptor, it
may be made (a tool that creates folders makes 3000 of them) or refused, never lead out."""


def escapes(root: Path) -> list[str]:
    """Paths that lead out of ``root / 'ws'`` (or nowhere); each must be refused."""
    outside = root / "outside"
    return [
        "..", "../", "../outside", "../outside/sentinel-secret.txt", "./../outside/sentinel-secret.txt",
        "sub/../../outside/sentinel-secret.txt", "sub/../../../../../../../../etc/passwd",
        "../" * 40 + "etc/passwd", "../" * 2000 + "outside/sentinel-secret.txt",
        str(outside), str(outside / "sentinel-secret.txt"), str(outside / "sentinel-script.py"),
        str(outside / "new-file.txt"), str(outside / "sentinel-sub"), "/", "/etc/passwd",
        "/etc", f"/proc/self/root{outside}/sentinel-secret.txt", "//" + str(outside).lstrip("/"),
        "link-out", "link-out/", "link-out/sentinel-secret.txt", "link-out/new-file.txt",
        "link-out/sentinel-sub/sentinel-deep.txt", "link-out/sentinel-script.py",
        "secret-link.txt", "sub/../link-out/sentinel-secret.txt",
        "loop", "loop/x", "ping", "ping/x",
        "\x00", "probe.txt\x00", "probe.txt\x00../outside/sentinel-secret.txt",
        "../outside/sentinel-secret.txt\x00", "link-out\x00",
        "a" * 300, "a" * 5000, DEEP, "é" * 200,
        "\udcfflink", "\udcfflink/sentinel-secret.txt", "\udcfflink/new-file.txt",
        "../outside/\udcff.txt", "\ud800/../../outside/sentinel-secret.txt",
    ]


ESCAPE_COUNT = len(escapes(Path("/x")))


def arguments(tool: str, param: str, path: str) -> dict[str, Any] | None:
    """The call that puts ``path`` in ``param`` of ``tool`` (other arguments harmless)."""
    base: dict[str, dict[str, Any]] = {
        "CreateDirectory": {},
        "CreateFile": {"content": "PWNED", "overwrite": True},
        "DeleteFile": {},
        "FindFiles": {"pattern": "*", "max_depth": 10},
        "ListFiles": {"recursive": True, "max_depth": 10},
        "MoveFile": {"source": "move-me.txt", "destination": "moved.txt", "overwrite": True},
        "ReadFile": {},
        "ReadMultipleFiles": {},
        "RemoveDirectory": {"recursive": True},
        "ReplaceTextInFile": {"old_str": "SENTINEL", "new_str": "PWNED",
                              "replace_all": True},
        "SearchText": {"query": "SENTINEL", "max_depth": 10},
        "SearchRegex": {"pattern": "SENT[I]NEL", "max_depth": 10},
        "WordCount": {},
        "RunPythonFile": {"file_path": "hello.py", "timeout": 20},
        "RunPythonCode": {"code": "print('ran')", "timeout": 20},
        "RunBashCode": {"code": "echo ran", "timeout": 20},
        "LoadSkill": {},
        "ReadSkillResource": {"skill_name": "demo", "resource_path": "SKILL.md"},
        "SaveAttachment": {"id": 1, "overwrite": True},
        "DownloadOneDriveFile": {"path": "a.txt", "overwrite": True},
        "UploadOneDriveFile": {"path": "up.txt", "overwrite": True},
    }
    if tool not in base:
        return None
    args = dict(base[tool])
    args[param] = [path] if param in ("paths", "filepaths") else path
    return args


# (tool, parameter) pairs: every parameter that names a local path
PATH_PARAMETERS = [
    ("CreateDirectory", "directory"), ("CreateFile", "filepath"), ("DeleteFile", "filepath"),
    ("FindFiles", "paths"), ("ListFiles", "directory"), ("MoveFile", "source"),
    ("MoveFile", "destination"), ("ReadFile", "filepath"), ("ReadMultipleFiles", "filepaths"),
    ("RemoveDirectory", "directory"), ("ReplaceTextInFile", "filepath"), ("SearchText", "paths"),
    ("SearchRegex", "paths"),
    ("WordCount", "filepath"), ("RunPythonFile", "file_path"),
    ("RunPythonFile", "working_directory"), ("RunPythonCode", "working_directory"),
    ("RunBashCode", "working_directory"), ("LoadSkill", "name"),
    ("ReadSkillResource", "resource_path"), ("ReadSkillResource", "skill_name"),
    ("SaveAttachment", "path"), ("DownloadOneDriveFile", "output_path"),
    ("UploadOneDriveFile", "local_path"),
]
# tools whose result may succeed on part of a list of paths (each path answered apart)
MULTI_PATH = {"FindFiles", "ReadMultipleFiles", "SearchRegex", "SearchText"}
# a link is an entry of the workspace: removing, moving or replacing the link itself (not
# what it points to) is allowed, as long as nothing outside changes
LINK_ENTRIES = {"loop", "ping", "link-out", "secret-link.txt", "\udcfflink"}
ENTRY_TOOLS = {"DeleteFile", "MoveFile", "CreateFile", "RemoveDirectory", "SaveAttachment",
               "DownloadOneDriveFile"}


class Place:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.outside = rel.make_sentinel_tree(root / "outside")
        (self.outside / "hardlinked.txt").write_text("hard-linked content outside\n", encoding="utf-8")
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        (self.cwd / "sentinel-cwd.txt").write_text(f"{rel.SENTINEL_TEXT} cwd\n", encoding="utf-8")
        self.seed()
        self.before = self.outside_state()

    def seed(self) -> None:
        ws = self.ws
        ws.mkdir(exist_ok=True)
        (ws / "probe.txt").write_text("probe\n", encoding="utf-8")
        (ws / "move-me.txt").write_text("move me\n", encoding="utf-8")
        (ws / "hello.py").write_text("print('hello from inside')\n", encoding="utf-8")
        (ws / "sub").mkdir(exist_ok=True)
        skill = ws / ".janito" / "skills" / "demo"
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill.\n---\nBody.\n",
                                        encoding="utf-8")
        (skill / "ref-out").unlink(missing_ok=True)
        os.symlink(self.outside, skill / "ref-out")
        links = {"link-out": self.outside, "secret-link.txt": self.outside / "sentinel-secret.txt",
                 "loop": ws / "loop", "ping": ws / "pong", "pong": ws / "ping"}
        for name, target in links.items():
            if not os.path.lexists(ws / name):
                os.symlink(target, ws / name)
        odd = os.fsencode(ws) + b"/\xfflink"
        if not os.path.lexists(odd):
            os.symlink(os.fsencode(self.outside), odd)
        latin = os.fsencode(ws) + b"/caf\xe9.txt"
        if not os.path.lexists(latin):
            with open(latin, "wb") as handle:
                handle.write(b"inside, named in latin-1\n")
        if not os.path.lexists(ws / "hard.txt"):
            os.link(self.outside / "hardlinked.txt", ws / "hard.txt")

    def outside_state(self) -> dict[str, Any]:
        return rel.snapshot(self.root, skip=[self.ws, self.root / "janito-config"])

    def check(self, label: str) -> None:
        changes = rel.diff(self.before, self.outside_state())
        assert not changes, f"{label} changed things outside the workspace:\n" + "\n".join(changes[:10])


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: Path) -> Iterator[Place]:
    isolated.mkdir(parents=True, exist_ok=True)
    made = Place(tmp_path)
    monkeypatch.chdir(made.cwd)
    yield made
    # pytest removes old temporary folders recursively: a 3000-level tree would exhaust
    # its stack, so the workspace's iterative removal takes it away first.
    from janito_core import Workspace

    with Workspace(made.ws) as workspace, contextlib.suppress(OSError):
        workspace.rmdir("d", recursive=True)


def leaked_names(text: str, path: str) -> list[str]:
    names = [*rel.SENTINEL_NAMES, "hardlinked.txt", "sentinel-cwd.txt"]
    return [n for n in names if n in text and n not in path]


@pytest.mark.parametrize(("tool", "param"), PATH_PARAMETERS,
                         ids=[f"{t}.{p}" for t, p in PATH_PARAMETERS])
def test_no_way_out(tool: str, param: str, place: Place, services: Any) -> None:
    registry = rel.make_registry(place.ws, "rwx")
    record = registry.record(tool)
    if record is None or record.status != "loaded":
        pytest.skip(f"{tool} is not loaded here: {record.reason if record else 'not installed'}")
    bodies_before = len(services.identity.bodies)
    for path in escapes(place.root):
        args = arguments(tool, param, path)
        assert args is not None
        result = rel.swept(call_tool(tool, args, registry=registry), f"escape {tool}")
        text = json.dumps(result, allow_nan=False)
        label = f"{tool}({param}={path[:60]!r})"
        assert isinstance(result.get("success"), bool), (label, result)
        assert rel.SENTINEL_TEXT not in text, f"{label} showed the content of an outside file"
        assert not leaked_names(text, path), f"{label} showed outside names {leaked_names(text, path)}"
        assert "root:x:0:0" not in text, f"{label} read /etc/passwd"
        assert "hard-linked content outside" not in text or tool in ("ReadFile", "SearchText", "SearchRegex"), label
        if result["success"] and tool in ENTRY_TOOLS and path in LINK_ENTRIES:
            rel.count("workspace: links handled as entries (outside untouched)")
        elif result["success"] and path == DEEP:
            rel.count("workspace: paths deeper than PATH_MAX made inside")
        elif result["success"] and path != path.encode("utf-8", "replace").decode("utf-8"):
            # dispatch takes a lone surrogate as U+FFFD (docs/dispatch.md): the call names
            # another entry than the odd link, made inside; place.check proves it
            rel.count("workspace: lone surrogates taken as U+FFFD (outside untouched)")
        elif tool not in MULTI_PATH:
            assert result["success"] is False, f"{label} succeeded: {text[:400]}"
        place.check(label)
        place.seed()  # a tool may move or remove what lies inside; put it back
        rel.count("workspace: escape attempts")
    for body in services.identity.bodies[bodies_before:]:
        assert rel.SENTINEL_TEXT.encode() not in body, f"{tool} uploaded an outside file"
    rel.count("workspace: tool parameters attacked")


def test_writes_through_a_hard_link_leave_the_outside_file_alone(place: Place) -> None:
    """A hard link inside the workspace is a name of the outside file: writes must replace
    the name (atomic rename), never write into the shared inode."""
    registry = rel.make_registry(place.ws, "rwx")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("CreateFile", {"filepath": "hard.txt", "content": "PWNED", "overwrite": True}),
        ("ReplaceTextInFile", {"filepath": "hard.txt", "old_str": "content",
                               "new_str": "PWNED"}),
        ("MoveFile", {"source": "probe.txt", "destination": "hard.txt", "overwrite": True}),
        ("DeleteFile", {"filepath": "hard.txt"}),
    ]
    for name, args in calls:
        place.seed()
        result = rel.swept(call_tool(name, args, registry=registry), name)
        assert isinstance(result["success"], bool)
        place.check(f"{name} through a hard link")
        assert (place.outside / "hardlinked.txt").read_text(encoding="utf-8") == \
            "hard-linked content outside\n"
        rel.count("workspace: escape attempts")


def test_skill_resource_links_and_odd_names(place: Place) -> None:
    from janito_skills._trust import trust

    trust(place.ws)  # a project's skills are offered once the user trusts its folder
    registry = rel.make_registry(place.ws, "r")
    for resource in ("ref-out", "ref-out/sentinel-secret.txt", "ref-out/../ref-out/sentinel-notes.md",
                     "../../../../outside/sentinel-secret.txt", "..\\..\\..\\..\\outside\\sentinel-secret.txt",
                     "C:\\outside\\sentinel-secret.txt", "/" + str(place.outside / "sentinel-secret.txt")):
        result = rel.swept(call_tool("ReadSkillResource", {"skill_name": "demo", "resource_path": resource},
                                     registry=registry), "skills")
        assert result["success"] is False, (resource, result)
        assert rel.SENTINEL_TEXT not in json.dumps(result)
        rel.count("workspace: escape attempts")
    listed = rel.swept(call_tool("LoadSkill", {"name": "demo"}, registry=registry), "skills")
    assert listed["success"] is True
    assert not leaked_names(json.dumps(listed), ""), listed
    place.check("skills")


def test_a_hostile_attachment_name_stays_inside(place: Place, services: Any) -> None:
    """The mail server names its attachment ``../../escape.txt``; it lands inside the workspace."""
    registry = rel.make_registry(place.ws, "rwx")
    result = rel.swept(call_tool("SaveAttachment", {"id": 1}, registry=registry), "gmail")
    assert result["success"] is True, result
    saved = place.ws / result["path"]
    assert saved.resolve().is_relative_to(place.ws.resolve())
    assert not (place.root / "escape.txt").exists() and not (place.root.parent / "escape.txt").exists()
    place.check("SaveAttachment")
    rel.count("workspace: escape attempts")


NON_UTF8_CHECKS: list[tuple[str, Callable[[Path], dict[str, Any]]]] = [
    ("ListFiles", lambda ws: {"directory": ".", "recursive": True, "max_depth": 2}),
    ("FindFiles", lambda ws: {"paths": ["."], "pattern": "caf*"}),
    ("SearchText", lambda ws: {"paths": ["."], "query": "latin-1"}),
    ("ReadFile", lambda ws: {"filepath": "caf\udce9.txt"}),
]


@pytest.mark.parametrize(("tool", "make"), NON_UTF8_CHECKS, ids=[t for t, _ in NON_UTF8_CHECKS])
def test_non_utf8_names_reach_the_model_as_valid_text(tool: str, make: Callable[[Path], dict[str, Any]],
                                                      place: Place) -> None:
    """A file whose name is not UTF-8 must not make the result unsendable: every shape's
    text must encode as UTF-8 (what any provider's HTTP request needs)."""
    registry = rel.make_registry(place.ws, "r")
    args = make(place.ws)
    result = rel.swept(call_tool(tool, args, registry=registry), tool)
    json.dumps(result, allow_nan=False)
    items = execute_tool_calls([{"id": "c1", "type": "function", "function": {
        "name": tool, "arguments": json.dumps(args)}}], registry=registry)
    content = items[0]["content"]
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        pytest.fail(f"{tool}'s result holds text that is not valid Unicode ({exc.reason} at "
                    f"{exc.start}): {content[max(0, exc.start - 60):exc.start + 20]!r}")
    place.check(tool)
    rel.count("workspace: escape attempts")
