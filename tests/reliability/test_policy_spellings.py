"""A denied file, spelled every way a model could spell it, through every file tool.

The workspace's ``.janito/policy.toml`` denies ``.env`` and ``secrets/**``; the registry
runs the real janito-files toolset under that policy (``Policy.load``, then
``Registry(policy=...)``) and every call goes through ``call_tool`` or
``execute_tool_calls``. Each spelling of a denied file (relative, absolute, with ``.``,
``..``, ``//``, a trailing slash, through a link to the file, to its folder or up to the
root, climbing out of the workspace and back) is given to every tool of the toolset in
each of its path arguments. Then:

- no result shows a denied file's content (a marker no other file holds);
- no listing or search result names a denied file;
- a denied file is never renamed, replaced, changed or removed, and no other path comes
  to hold its content or its inode (no tool makes a hard link or a copy of it);
- ``.janito/policy.toml`` keeps its bytes and its modification time whatever each write
  tool tried with each of its spellings.

Names that only look alike (another case, a trailing dot or space, full-width letters, a
zero-width space) are other files on a case-sensitive filesystem: they are not the denied
file and are not treated as it.
"""

from __future__ import annotations

import json
import os
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel

from janito_core import Privileges, Registry, Workspace
from janito_core.dispatch import call_tool, execute_tool_calls
from janito_core.policy import Policy

FRAGMENT = "CONTENT-5d1e"
#: The denied files and the content each holds: nothing else in the workspace holds it.
DENIED = {
    ".env": f"TOKEN=DENIED-ENV-{FRAGMENT}-root\n",
    "src/.env": f"TOKEN=DENIED-ENV-{FRAGMENT}-src\n",
    "secrets/key.pem": f"-----BEGIN KEY-----\nDENIED-KEY-{FRAGMENT}-pem\n",
}
MARKERS = [content.strip().splitlines()[-1] for content in DENIED.values()]
DENIED_NAMES = {".env", "key.pem"}
POLICY_TOML = '''mode = "auto-edit"
[[rules]]
action = "deny"
paths = [".env", "secrets/**"]
'''
LINKS = {  # name -> target, made inside the workspace before any call
    "src/up": "..",
    "env-link": ".env",
    "abs-link": "{root}/.env",
    "chain-link": "env-link",
    "src/env-link": "../.env",
    "secrets-link": "secrets",
    "key-link": "secrets/key.pem",
    "janito-link": ".janito",
    "policy-link": ".janito/policy.toml",
}

ENV_SPELLINGS = [
    ".env", "./.env", ".//.env", "././.env", "src/../.env", "src/./../.env",
    "nope/../.env", "src/up/.env", "src/up/src/up/.env", "src/up/./.env", "{root}/.env",
    "{root}//.env", "{root}/./.env", "{root}/src/../.env", "/{root}/.env",
    "../{name}/.env", "src/../../{name}/.env", "env-link", "abs-link", "chain-link",
    "src/env-link", "src/up/env-link", "{root}/env-link", "src/.env", "./src//.env",
    "src/up/src/.env", "{root}/src/.env", ".env/", ".env/.", ".env//", "env-link/",
]
SECRETS_SPELLINGS = [
    "secrets/key.pem", "./secrets/key.pem", "secrets//key.pem", "secrets/./key.pem",
    "secrets/../secrets/key.pem", "src/../secrets/key.pem", "src/up/secrets/key.pem",
    "{root}/secrets/key.pem", "secrets-link/key.pem", "src/up/secrets-link/key.pem",
    "{root}/secrets-link/key.pem", "key-link", "secrets/key.pem/", "secrets", "secrets/",
    "secrets/.", "secrets-link", "secrets-link/", "src/up/secrets/", "{root}/secrets",
]
SPELLINGS = ENV_SPELLINGS + SECRETS_SPELLINGS
#: Spellings that name a link to the denied folder itself, not what is in it.
FOLDER_LINKS = {"secrets-link"}
POLICY_SPELLINGS = [
    ".janito/policy.toml", "./.janito/policy.toml", ".janito//policy.toml",
    ".janito/./policy.toml", "src/../.janito/policy.toml", "src/up/.janito/policy.toml",
    "{root}/.janito/policy.toml", "../{name}/.janito/policy.toml", "janito-link/policy.toml",
    "policy-link", ".janito", ".janito/", "janito-link", "janito-link/",
]
#: Other names on a case-sensitive filesystem; those made exist with content of their own.
LOOK_ALIKES = {
    ".ENV": "case variant, allowed\n", ".Env": None, "SECRETS/key.pem": None,
    "secrets-other/KEY.pem": None, ".env.": "trailing dot, allowed\n",
    ".env ": "trailing space, allowed\n", "\uff0e\uff45\uff4e\uff56": "full-width, allowed\n",
    ".env\u200b": "zero-width space, allowed\n", "sec\u0072ets\u0301/key.pem": None,
}


def _build(root: Path) -> None:
    """The workspace's files (into ``root``, which is kept, as the registry holds it)."""
    for child in list(root.iterdir()) if root.exists() else []:
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    root.mkdir(exist_ok=True)
    for relative, content in {**DENIED, "notes.txt": "allowed notes\n",
                              "src/app.py": "print('allowed')\n",
                              ".janito/policy.toml": POLICY_TOML}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    for relative, target in LINKS.items():
        (root / relative).symlink_to(target.format(root=root))


def _registry(root: Path) -> Registry:
    registry = Registry(privileges=Privileges.from_string("rw"), workspace=Workspace(root),
                        autoload=(), allowed=None, policy=Policy.load(root), reports="off")
    rel.watch(registry)
    registry.add_toolset("files")
    return registry


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    _build(folder)
    yield folder


def _state(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """The denied files and the policy file: bytes, modification time, inode."""
    out = {}
    for relative in (*DENIED, ".janito/policy.toml"):
        info = os.lstat(root / relative)
        out[relative] = ((root / relative).read_bytes(), info.st_mtime_ns, info.st_ino)
    return out


def _intruders(root: Path, state: dict[str, tuple[bytes, int, int]]) -> list[str]:
    """Paths other than the denied files that hold a denied file's inode or content."""
    inodes = {ino for relative, (_, _, ino) in state.items() if relative in DENIED}
    found = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder, name)
            relative = path.relative_to(root).as_posix()
            if relative in DENIED or path.is_symlink():
                continue
            if os.lstat(path).st_ino in inodes or FRAGMENT in path.read_text("utf-8", "replace"):
                found.append(relative)
    return found


def _named(result: Any) -> list[str]:
    """The paths a listing or search result names (entries, files, matches)."""
    names: list[str] = []
    for key in ("entries", "files", "matches"):
        for item in result.get(key) or []:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, dict):
                names.extend(str(item[k]) for k in ("path", "file", "filepath") if k in item
                             and item.get("success", True))
    return names


def _names_denied(path: str) -> bool:
    parts = path.rstrip("/@").split("/")
    return parts[-1] in DENIED_NAMES


def _calls(path: Any) -> list[tuple[str, dict[str, Any]]]:
    """Every tool of janito-files, with ``path`` in each of its path arguments."""
    return [
        ("ReadFile", {"filepath": path}),
        ("ReadFile", {"filepath": path, "start_line": -1, "line_numbers": True}),
        ("ReadMultipleFiles", {"filepaths": [path, "notes.txt"]}),
        ("WordCount", {"filepath": path}),
        ("SearchText", {"paths": path, "query": FRAGMENT}),
        ("SearchText", {"paths": [path], "query": FRAGMENT, "respect_gitignore": False}),
        ("SearchRegex", {"paths": path, "pattern": "CONTENT-5d1e"}),
        ("SearchRegex", {"paths": path, "pattern": "C.NTENT", "count_only": True}),
        ("FindFiles", {"paths": path, "pattern": "*"}),
        ("FindFiles", {"paths": path, "file_type": "any", "respect_gitignore": False}),
        ("ListFiles", {"directory": path, "recursive": True}),
        ("ListFiles", {"directory": path, "respect_gitignore": False}),
        ("MoveFile", {"source": path, "destination": "public.txt"}),
        ("MoveFile", {"source": path, "destination": "moved/", "create_dirs": True}),
        ("MoveFile", {"source": "notes.txt", "destination": path, "overwrite": True}),
        ("CreateFile", {"filepath": path, "content": "overwritten\n", "overwrite": True}),
        ("ReplaceTextInFile", {"filepath": path, "old_str": "DENIED", "new_str": "gone"}),
        ("ReplaceTextInFile", {"filepath": path, "old_str": "TOKEN", "new_str": "X",
                               "replace_all": True}),
        ("DeleteFile", {"filepath": path}),
        ("CreateDirectory", {"directory": f"{path}/sub"}),
        ("RemoveDirectory", {"directory": path, "recursive": True, "force": True}),
    ]


WRITES = {"MoveFile", "CreateFile", "ReplaceTextInFile", "DeleteFile", "CreateDirectory",
          "RemoveDirectory"}


def test_every_file_tool_is_probed(root: Path) -> None:
    registry = _registry(root)
    assert set(registry.names()) == {name for name, _ in _calls("x")}, registry.names()
    assert len(SPELLINGS) >= 30 and len(set(SPELLINGS)) == len(SPELLINGS)


def _spelled(spelling: str, root: Path) -> str:
    return spelling.format(root=root, name=root.name)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_no_spelling_of_a_denied_file_reaches_it(root: Path, spelling: str) -> None:
    registry = _registry(root)
    path = _spelled(spelling, root)
    before = _state(root)
    probes = 0
    for name, args in _calls(path):
        result = rel.swept(call_tool(name, args, registry=registry), f"{name} {spelling}")
        probes += 1
        shown = json.dumps(result)
        where = (name, args, result)
        for marker in MARKERS:
            assert marker not in shown, where
        assert not [p for p in _named(result) if _names_denied(p)], where
        if name in WRITES and result["success"]:
            # A link to the denied folder is no denied path (``secrets/**`` covers what is
            # in the folder): it is moved, replaced or removed as a link, and the folder
            # stays where it is, as denied as before.
            assert spelling in FOLDER_LINKS, where
            if name == "MoveFile" and args["source"] == path:
                assert result["kind"] == "symlink", where
                moved = result["destination"]
                assert (root / moved).is_symlink(), where
                again = call_tool("ListFiles", {"directory": moved}, registry=registry)
                assert again["success"] is False or not again["entries"], again
            assert (root / "secrets").is_dir() and not (root / "secrets").is_symlink()
            rel.count("policy spellings: writes on a link to the denied folder (the link)")
        elif name in ("ReadFile", "WordCount") or name in WRITES:
            assert result["success"] is False, where
        if name == "ReadMultipleFiles":
            assert result["files"][0]["success"] is False, where
        if not result["success"]:
            # a refused move may have made the folder it was to go into, never more
            assert not [p for p in root.glob("moved/**/*")], where
        assert _state(root) == before, where
        assert not _intruders(root, before), where
        if result["success"] and name in WRITES:
            _build(root)
            before = _state(root)
    # the same calls as one turn of a model, run at once
    turn = [{"type": "tool_use", "id": f"t{n}", "name": name, "input": args}
            for n, (name, args) in enumerate(_calls(path))]
    for item in rel.swept(execute_tool_calls(turn, registry=registry), f"turn {spelling}"):
        probes += 1
        for marker in MARKERS:
            assert marker not in json.dumps(item), item
        assert not [p for p in _named(json.loads(item["content"])) if _names_denied(p)], item
    assert _state(root) == before and not _intruders(root, before)
    rel.count("policy spellings: denied-file spellings")
    rel.count("policy spellings: calls with a denied spelling", probes)


def test_listings_and_searches_of_the_whole_workspace_never_name_a_denied_file(root: Path) -> None:
    registry = _registry(root)
    calls = [
        ("ListFiles", {"directory": ".", "recursive": True}),
        ("ListFiles", {"directory": ".", "recursive": True, "respect_gitignore": False}),
        ("ListFiles", {"directory": "src/up", "recursive": True}),
        ("ListFiles", {"directory": str(root), "recursive": True, "pattern": "*.pem"}),
        ("FindFiles", {"paths": ".", "pattern": "*"}),
        ("FindFiles", {"paths": ".", "pattern": ".env"}),
        ("FindFiles", {"paths": ".", "pattern": "*.pem", "file_type": "any"}),
        ("FindFiles", {"paths": [".", "src/up", "secrets-link"], "respect_gitignore": False}),
        ("SearchText", {"paths": ".", "query": FRAGMENT}),
        ("SearchText", {"paths": [".", "src/up", "env-link", "key-link"], "query": "TOKEN"}),
        ("SearchText", {"paths": ".", "query": "KEY", "respect_gitignore": False}),
        ("SearchRegex", {"paths": ".", "pattern": "DENIED-(ENV|KEY)"}),
        ("SearchRegex", {"paths": ".", "pattern": ".", "count_only": True}),
        ("ReadMultipleFiles", {"filepaths": [_spelled(s, root) for s in SPELLINGS] + ["notes.txt"]}),
    ]
    for name, args in calls:
        result = rel.swept(call_tool(name, args, registry=registry), name)
        shown = json.dumps(result)
        for marker in MARKERS:
            assert marker not in shown, (name, args, result)
        assert not [p for p in _named(result) if _names_denied(p)], (name, args, result)
        assert result["success"], (name, args, result)
    listing = call_tool("ListFiles", {"directory": ".", "recursive": True}, registry=registry)
    assert "notes.txt" in listing["entries"] and "src/app.py" in listing["entries"], listing
    found = call_tool("SearchText", {"paths": ".", "query": "allowed"}, registry=registry)
    assert found["count"] >= 2, found
    multiple = call_tool("ReadMultipleFiles", calls[-1][1], registry=registry)
    assert multiple["read"] == 1 and multiple["failed"] == len(SPELLINGS), multiple
    rel.count("policy spellings: whole-workspace listings and searches", len(calls))


@pytest.mark.parametrize("spelling", POLICY_SPELLINGS)
def test_the_workspace_policy_file_never_changes(root: Path, spelling: str) -> None:
    registry = _registry(root)
    path = _spelled(spelling, root)
    policy = root / ".janito" / "policy.toml"
    before = (policy.read_bytes(), os.stat(policy).st_mtime_ns, os.stat(policy).st_ino,
              sorted(os.listdir(root / ".janito")))
    probes = 0
    for name, args in _calls(path):
        if name not in WRITES:
            continue
        if name == "ReplaceTextInFile":
            args = {**args, "old_str": "deny", "new_str": "allow", "replace_all": True}
        result = rel.swept(call_tool(name, args, registry=registry), f"{name} {spelling}")
        probes += 1
        assert result["success"] is False, (name, args, result)
        after = (policy.read_bytes(), os.stat(policy).st_mtime_ns, os.stat(policy).st_ino,
                 sorted(os.listdir(root / ".janito")))
        assert after == before, (name, args, result)
    for extra in ({"source": "notes.txt", "destination": f"{path}/notes.txt", "create_dirs": True},
                  {"source": ".janito", "destination": "elsewhere"},
                  {"source": "janito-link/policy.toml", "destination": "policy.toml"}):
        result = call_tool("MoveFile", extra, registry=registry)
        probes += 1
        assert result["success"] is False, (extra, result)
    assert (policy.read_bytes(), os.stat(policy).st_mtime_ns) == before[:2]
    assert Policy.load(root).as_json()["rules"][0]["paths"] == [".env", "secrets/**"]
    rel.count("policy spellings: policy-file spellings")
    rel.count("policy spellings: writes aimed at .janito/policy.toml", probes)


def _case_sensitive(folder: Path) -> bool:
    probe = folder / "Case-Probe"
    probe.write_text("x")
    try:
        return not (folder / "case-probe").exists()
    finally:
        probe.unlink()


def test_look_alike_names_are_other_files(root: Path) -> None:
    """On a case-sensitive filesystem ``.ENV`` is another file than ``.env``: readable when
    it exists, and never the denied content; so are the other look-alikes."""
    if not _case_sensitive(root):
        pytest.skip("the filesystem folds case: .ENV would be .env itself")
    for name, content in LOOK_ALIKES.items():
        if content is not None:
            (root / name).write_text(content)
    assert unicodedata.normalize("NFKC", "\uff0e\uff45\uff4e\uff56") == ".env"
    registry = _registry(root)
    probes = 0
    for name, content in LOOK_ALIKES.items():
        for tool, args in _calls(name):
            if tool in WRITES:
                continue
            result = rel.swept(call_tool(tool, args, registry=registry), f"{tool} {name!r}")
            probes += 1
            for marker in MARKERS:
                assert marker not in json.dumps(result), (tool, args, result)
        read = call_tool("ReadFile", {"filepath": name}, registry=registry)
        if content is None:
            assert read["error_type"] == "not_found", read
        else:
            assert read["success"] and read["content"] == content, read
    rel.count("policy spellings: look-alike names (other files)", len(LOOK_ALIKES))
    rel.count("policy spellings: calls with a look-alike name", probes)


def test_a_file_denied_for_reads_only_is_not_named_when_given_as_a_start(tmp_path: Path) -> None:
    """A rule with ``access = "read"`` leaves writes to the path open, so the workspace
    refuses it as it is looked at: a listing started at the file does not name it, nor
    tell its size or time."""
    root = tmp_path / "ws"
    (root / "private").mkdir(parents=True)
    (root / "private" / "diary.txt").write_text(f"DENIED-DIARY-{FRAGMENT}\n")
    (root / "diary-link").symlink_to("private/diary.txt")
    policy = Policy.from_data({"rules": [{"action": "deny", "paths": ["private/**"],
                                          "access": "read"}]})
    registry = Registry(privileges=Privileges.from_string("rw"), workspace=Workspace(root),
                        autoload=(), allowed=None, policy=policy, reports="off")
    rel.watch(registry)
    registry.add_toolset("files")
    for path in ("private/diary.txt", "diary-link", "./private//diary.txt", str(root / "diary-link")):
        for name, args in (("FindFiles", {"paths": path, "pattern": "*"}),
                           ("FindFiles", {"paths": path, "sort_by": "size"}),
                           ("ListFiles", {"directory": path}),
                           ("ReadFile", {"filepath": path})):
            result = rel.swept(call_tool(name, args, registry=registry), name)
            assert result["success"] is False, (name, args, result)
            assert not _named(result) and "details" not in result, result
            assert "policy denies" in result["error"] and FRAGMENT not in json.dumps(result)
    # writes stay open
    done = call_tool("CreateFile", {"filepath": "private/new.txt", "content": "x"},
                     registry=registry)
    assert done["success"], done
