"""What an edit keeps of the file it replaces: a read-only file is refused, not replaced;
the mode and the user.* extended attributes survive every edit and a move; a line holding
bytes that are not UTF-8 can be edited, and every other byte stays as it was."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path
from typing import Any

import pytest
from files_helpers import fails, ok
from janito_files._shown import ShownText


def _user_xattrs(folder: Path) -> str | None:
    """Why ``folder``'s filesystem keeps no user.* attributes, or None when it does."""
    if not hasattr(os, "setxattr"):
        return "this platform has no extended attributes"
    probe = folder / ".xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.janito.probe", b"1")
    except OSError as exc:
        return f"the filesystem of {folder} keeps no user.* attributes ({exc.strerror})"
    finally:
        probe.unlink()
    return None


# -- read-only files -----------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "arguments"), [
    ("CreateFile", {"filepath": "locked.txt", "content": "new\n", "overwrite": True}),
    ("ReplaceTextInFile", {"filepath": "locked.txt", "old_str": "kept", "new_str": "gone"}),
    ("MoveFile", {"source": "other.txt", "destination": "locked.txt", "overwrite": True}),
])
def test_a_read_only_file_is_refused_and_left_as_it_is(files: Any, ws: Path, tool: str,
                                                        arguments: dict[str, Any]) -> None:
    locked = ws / "locked.txt"
    locked.write_text("kept\n")
    locked.chmod(0o444)
    (ws / "other.txt").write_text("other\n")
    before = os.stat(locked)
    result = fails(files.call(tool, **arguments), "read_only_file")
    assert "read-only" in result["error"] and "0444" in result["error"], result
    after = os.stat(locked)
    assert locked.read_text() == "kept\n"
    assert (after.st_ino, stat.S_IMODE(after.st_mode)) == (before.st_ino, 0o444)
    assert (ws / "other.txt").read_text() == "other\n"
    assert sorted(p.name for p in ws.iterdir()) == ["locked.txt", "other.txt"]  # no temp left
    # made writable again, the same call goes through
    locked.chmod(0o644)
    ok(files.call(tool, **arguments))


def test_a_file_others_may_not_write_is_still_the_owners_to_edit(files: Any,
                                                                 ws: Path) -> None:
    # 0644 and 0600: read-only for others, but this process owns the file
    for mode in (0o644, 0o600):
        path = ws / f"mine-{mode:o}.txt"
        path.write_text("kept\n")
        path.chmod(mode)
        ok(files.call("ReplaceTextInFile", filepath=path.name, old_str="kept", new_str="new"))
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
        path.chmod(0o600)
        assert path.read_text() == "new\n"


def test_janitos_own_private_files_are_still_replaced() -> None:
    # write_private sets the mode itself (0600): a settings file its owner made 0400 is
    # replaced by janito's own commands, which the person ran
    import tempfile

    from janito_core.config import write_private

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "secrets.json"
        target.write_text("{}")
        target.chmod(0o400)
        write_private(target, b'{"a": 1}')
        assert target.read_bytes() == b'{"a": 1}'
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o600


# -- extended attributes and the mode -----------------------------------------------------------


@pytest.fixture
def xattrs(ws: Path) -> None:
    why = _user_xattrs(ws)
    if why:
        pytest.skip(why)


@pytest.mark.usefixtures("xattrs")
@pytest.mark.parametrize(("tool", "arguments"), [
    ("CreateFile", {"filepath": "tagged.txt", "content": "new\n", "overwrite": True}),
    ("ReplaceTextInFile", {"filepath": "tagged.txt", "old_str": "old", "new_str": "new"}),
])
def test_an_edit_keeps_the_mode_and_the_user_attributes(files: Any, ws: Path, tool: str,
                                                       arguments: dict[str, Any]) -> None:
    path = ws / "tagged.txt"
    path.write_text("old\n")
    path.chmod(0o751)
    os.setxattr(path, "user.origin", b"downloaded from https://example.org")
    os.setxattr(path, "user.empty", b"")
    os.setxattr(path, "user.binary", bytes(range(256)))
    before = os.stat(path)
    ok(files.call(tool, **arguments))
    after = os.stat(path)
    assert path.read_text() == "new\n"
    assert after.st_ino != before.st_ino  # replaced, not written in place
    assert stat.S_IMODE(after.st_mode) == 0o751
    assert sorted(os.listxattr(path)) == ["user.binary", "user.empty", "user.origin"]
    assert os.getxattr(path, "user.origin") == b"downloaded from https://example.org"
    assert os.getxattr(path, "user.empty") == b""
    assert os.getxattr(path, "user.binary") == bytes(range(256))


@pytest.mark.usefixtures("xattrs")
def test_a_file_no_one_may_read_keeps_its_attributes_too(files: Any, ws: Path) -> None:
    path = ws / "write-only.txt"
    path.write_text("old\n")
    os.setxattr(path, "user.tag", b"1")
    path.chmod(0o200)
    ok(files.call("CreateFile", filepath=path.name, content="new\n", overwrite=True))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o200
    assert os.getxattr(path, "user.tag") == b"1"


@pytest.mark.usefixtures("xattrs")
def test_a_new_file_takes_no_attributes_of_a_file_it_did_not_replace(files: Any,
                                                                     ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")
    os.setxattr(ws / "a.txt", "user.tag", b"a")
    ok(files.call("CreateFile", filepath="b.txt", content="b\n"))
    assert os.listxattr(ws / "b.txt") == []


@pytest.mark.usefixtures("xattrs")
def test_the_copy_a_move_across_filesystems_makes_keeps_the_attributes_of_the_file_moved(
        files: Any, ws: Path) -> None:
    # MoveFile copies (then removes the source) when rename() answers EXDEV; the copy
    # steps are run here on one filesystem, which needs no second mount
    from janito_files._copy import copy_file, copy_tree

    workspace = files.registry.workspace
    source = ws / "a.txt"
    source.write_text("a\n")
    os.setxattr(source, "user.tag", b"source")
    (ws / "b.txt").write_text("replaced\n")
    os.setxattr(ws / "b.txt", "user.tag", b"replaced")
    os.setxattr(ws / "b.txt", "user.only-replaced", b"x")
    with workspace.locate("a.txt") as where, workspace.locate("b.txt") as target:
        copy_file(where, target, overwrite=True)
    assert (ws / "b.txt").read_text() == "a\n"
    assert os.listxattr(ws / "b.txt") == ["user.tag"]
    assert os.getxattr(ws / "b.txt", "user.tag") == b"source"
    (ws / "tree" / "sub").mkdir(parents=True)
    (ws / "tree" / "sub" / "f.txt").write_text("f\n")
    os.setxattr(ws / "tree" / "sub" / "f.txt", "user.tag", b"in a tree")
    with workspace.locate("tree") as where, workspace.locate("copy") as target:
        copy_tree(workspace, "tree", where, target)
    assert os.getxattr(ws / "copy" / "sub" / "f.txt", "user.tag") == b"in a tree"


# -- bytes that are not UTF-8 -------------------------------------------------------------------


def test_a_line_with_bytes_that_are_not_utf8_can_be_edited(files: Any, ws: Path) -> None:
    raw = b"first \xff line\ncaf\xe9 au lait\nlast \xe2\x82 \xf0\x9f\x98\n"
    (ws / "latin.txt").write_bytes(raw)
    shown = ok(files.call("ReadFile", filepath="latin.txt"))["content"]
    assert "caf\ufffd au lait" in shown
    # the line as ReadFile showed it, with its U+FFFD, is found; new_str's U+FFFD keeps
    # the byte it stood for
    result = ok(files.call("ReplaceTextInFile", filepath="latin.txt",
                           old_str="caf\ufffd au lait", new_str="caf\ufffd noir"))
    assert result["first_line"] == 2 and "kept those bytes" in result["note"]
    assert (ws / "latin.txt").read_bytes() == raw.replace(b"au lait", b"noir")
    # one U+FFFD is one undecodable sequence: a truncated three-byte one and a truncated
    # four-byte one each read as one
    ok(files.call("ReplaceTextInFile", filepath="latin.txt", old_str="last \ufffd \ufffd",
                  new_str="end \ufffd \ufffd"))
    assert (ws / "latin.txt").read_bytes() == \
        b"first \xff line\ncaf\xe9 noir\nend \xe2\x82 \xf0\x9f\x98\n"
    # new_str without U+FFFD drops them: the line is the model's to rewrite
    ok(files.call("ReplaceTextInFile", filepath="latin.txt", old_str="first \ufffd line",
                  new_str="first line"))
    assert (ws / "latin.txt").read_bytes() == \
        b"first line\ncaf\xe9 noir\nend \xe2\x82 \xf0\x9f\x98\n"


def test_a_genuine_replacement_character_is_still_matched(files: Any, ws: Path) -> None:
    raw = "a \ufffd b\n".encode() + b"c \xfe d\n"
    (ws / "mixed.txt").write_bytes(raw)
    fails(files.call("ReplaceTextInFile", filepath="mixed.txt", old_str=" \ufffd ",
                     new_str=" - "), "multiple_matches")
    ok(files.call("ReplaceTextInFile", filepath="mixed.txt", old_str=" \ufffd ",
                  new_str=" \ufffd! ", replace_all=True))
    assert (ws / "mixed.txt").read_bytes() == "a \ufffd! b\n".encode() + b"c \xfe! d\n"


def test_the_shown_text_is_what_replace_decoding_gives_and_maps_back() -> None:
    rng = random.Random(31)
    alphabet = [b"a", b"\n", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff",
                b"\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3", b"\xed\xa0\x80", b"\xef\xbf\xbd"]
    for _ in range(2000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        text = data.decode("utf-8", "surrogateescape")
        view = ShownText(text)
        assert view.shown == data.decode("utf-8", "replace"), data
        # every U+FFFD of the shown text stands for whole bytes of the file
        for at, char in enumerate(view.shown):
            if char == "\ufffd":
                start, end = view.raw_offset(at), view.raw_offset(at + 1)
                piece = text[start:end].encode("utf-8", "surrogateescape")
                assert piece.decode("utf-8", "replace") == "\ufffd", (data, piece)
        assert view.raw_offset(len(view.shown)) == len(text)
        # replacing a character of the shown text by itself keeps every byte
        if view.shown:
            at = rng.randrange(len(view.shown))
            search = view.shown[at]
            rebuilt, _ = view.replace(search, search, True)
            if "\ufffd" in search:
                assert rebuilt.encode("utf-8", "surrogateescape") == data
