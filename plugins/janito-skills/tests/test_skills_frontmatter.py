"""Front matter: what is accepted, what is refused and why, and how little is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from janito_skills._frontmatter import (
    MAX_FRONT_MATTER_BYTES,
    SkillFileError,
    read_body,
    read_front_matter,
)


def skill_file(tmp_path: Path, content: str | bytes) -> str:
    path = tmp_path / "SKILL.md"
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return str(path)


def test_minimal(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "---\nname: demo\ndescription: A demo.\n---\n# Body\n")
    assert read_front_matter(path) == {"name": "demo", "description": "A demo."}
    assert read_body(path) == ("# Body\n", False)


def test_yaml_forms_that_skills_use(tmp_path: Path) -> None:
    path = skill_file(tmp_path, (
        "---\n"
        "name: pdf-processing\n"
        "description: >\n"
        "  Extract text and tables from PDF files.\n"
        "  Use when handling PDFs.\n"
        "license: Apache-2.0\n"
        "compatibility: 'Requires: pdfplumber'\n"
        "metadata:\n"
        "  author: example-org\n"
        "  version: \"1.0\"\n"
        "  released: 2025-01-31\n"
        "allowed-tools: Bash(python3:*) Read\n"
        "---\n"
        "body\n"
    ))
    front = read_front_matter(path)
    assert front["description"] == (
        "Extract text and tables from PDF files. Use when handling PDFs.\n"
    )
    assert front["compatibility"] == "Requires: pdfplumber"
    assert front["metadata"] == {"author": "example-org", "version": "1.0",
                                 "released": "2025-01-31"}
    assert front["allowed-tools"] == "Bash(python3:*) Read"


def test_bom_and_crlf(tmp_path: Path) -> None:
    path = skill_file(tmp_path, b"\xef\xbb\xbf---\r\nname: crlf\r\ndescription: x\r\n---\r\nbody\r\n")
    assert read_front_matter(path) == {"name": "crlf", "description": "x"}
    assert read_body(path)[0] == "body\r\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "the file is empty"),
        ("name: a\ndescription: b\n", "does not start with a '---' line"),
        ("# Title\n---\nname: a\n---\n", "does not start with a '---' line"),
        ("---\nname: a\ndescription: b\n", "never closed"),
        ("---\nname: a\ndescription: Use when: x\n---\n", "value containing ': ' must be quoted"),
        ("---\nname: [a\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "must be a mapping of keys to values, not a list"),
        ("---\njust text\n---\n", "not a string"),
        ("---\n---\nbody\n", "the front matter is empty"),
        ("---\n!!python/object:os.system {}\n---\n", "not valid YAML"),
    ],
)
def test_refused_with_a_reason(tmp_path: Path, content: str, expected: str) -> None:
    path = skill_file(tmp_path, content)
    with pytest.raises(SkillFileError) as info:
        read_front_matter(path)
    assert expected in str(info.value)


def test_yaml_error_names_the_line_of_the_file(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "---\nname: ok\ndescription: Use when: x\n---\n")
    with pytest.raises(SkillFileError, match="line 3"):
        read_front_matter(path)


def test_invalid_utf8(tmp_path: Path) -> None:
    path = skill_file(tmp_path, b"---\nname: \xff\xfe\ndescription: x\n---\n")
    with pytest.raises(SkillFileError, match="not valid UTF-8"):
        read_front_matter(path)


def test_alias_expansion_is_bounded(tmp_path: Path) -> None:
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    previous = "a"
    for level in "bcdefgh":
        lines.append(f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]")
        previous = level
    lines += ["name: bomb", "description: boom", "---", ""]
    path = skill_file(tmp_path, "\n".join(lines))
    with pytest.raises(SkillFileError, match="too large once expanded"):
        read_front_matter(path)


def test_unclosed_front_matter_stops_at_the_size_bound(tmp_path: Path) -> None:
    line = "k: " + "v" * 60 + "\n"
    path = skill_file(tmp_path, "---\n" + line * (2 * MAX_FRONT_MATTER_BYTES // len(line)))
    with pytest.raises(SkillFileError, match="no closing '---' line within the first 64 KiB"):
        read_front_matter(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SkillFileError, match="does not exist"):
        read_front_matter(str(tmp_path / "nope" / "SKILL.md"))


def _bytes_read() -> int:
    with open("/proc/self/io", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_reads_only_the_front_matter(tmp_path: Path) -> None:
    """Parsing a SKILL.md with a 4 MiB body reads a few KiB, counted by the kernel."""
    body = ("lorem ipsum " * 80 + "\n") * 4400
    path = skill_file(tmp_path, "---\nname: big\ndescription: big body\n---\n" + body)
    read_front_matter(path)  # warm up: imports, caches
    before = _bytes_read()
    assert read_front_matter(path)["name"] == "big"
    consumed = _bytes_read() - before
    assert os.path.getsize(path) > 4_000_000
    assert consumed < 256 * 1024, consumed
