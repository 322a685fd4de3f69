"""An ignore file's rules answer every path exactly as ``pathspec`` does, the paths no
rule matches included, which janito_files._ignore answers without asking pathspec."""

from __future__ import annotations

import random

import pytest
from janito_files._ignore import IgnoreFile, compile_lines, joined_patterns

# glob pieces, the tricky ones included: what a regular expression would read otherwise
PIECES = ["a", "b", "x.py", "*.py", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "[]]", "[a-]",
          "[(?P<x>]", "\\(?P<x>", "(?P<ps_d>", "\\*", "\\ ", "\\#", "\\!", "#c", ".", "..",
          "é", "d*", "(", ")", "|", "$", "^", "+", "{a,b}", " ", "\\", "\\1", "(?i)", "\t"]
NAMES = ["a", "b", "x.py", "y.txt", "d1", "é", "(", ")", "P<x>", "?", "*", "[ab]", " ",
         ".hidden", "ps_d", "\\", "1", "#c", "!", "a b", "A", "X.PY"]

PYTHON_GITIGNORE = """__pycache__/
*.py[cod]
*$py.class
*.so
build/
*.egg-info/
.tox/
.coverage
.coverage.*
*.log
/site
docs/_build/
.venv
env/
!keep.log
"""


def random_line(rng: random.Random) -> str:
    line = rng.choice(["", "/", "**/"]).join(rng.choice(PIECES)
                                             for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.2:
        line = "!" + line
    if rng.random() < 0.2:
        line = "/" + line
    if rng.random() < 0.2:
        line += "/"
    return line


def random_path(rng: random.Random) -> str:
    path = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.3:
        path += "/"  # a folder, as the walk asks of one
    if rng.random() < 0.05:
        path = rng.choice(["./", "/"]) + path  # never from the walk: pathspec answers
    return path


def test_every_path_gets_pathspecs_answer() -> None:
    rng = random.Random(37)
    joined = refused = only_ignores = 0
    for _ in range(1500):
        lines = [random_line(rng) for _ in range(rng.randint(1, 8))]
        spec = compile_lines(lines)
        if spec is None:
            continue
        rules = IgnoreFile(spec)
        if not rules._joined:
            refused += 1
        else:
            joined += 1
            only_ignores += rules._only_ignores
        for _ in range(40):
            path = random_path(rng)
            assert rules.verdict(path) == spec.check_file(path).include, (lines, path)
    # most files are answered the quick way (a refusal here is a spec holding a line with
    # "[(?P<x>]", one in 36 pieces), and the refusals are exercised too
    assert joined > 2 * refused > 0, (joined, refused)
    # and files without a "!" rule, answered without pathspec where a rule matches
    assert joined > only_ignores > joined // 4, (joined, only_ignores)


@pytest.mark.parametrize("taken_back", [True, False])
def test_a_common_gitignore_is_joined_and_agrees_on_a_tree_of_paths(taken_back: bool) -> None:
    # without its "!" rule, a path some rule matches is answered without asking pathspec
    lines = [line for line in PYTHON_GITIGNORE.splitlines()
             if taken_back or not line.startswith("!")]
    spec = compile_lines(lines)
    rules = IgnoreFile(spec)
    assert rules._joined
    assert rules._only_ignores is not taken_back
    rng = random.Random(5)
    names = ["src", "pkg", "__pycache__", "build", "x.py", "x.pyc", "a.so", "run.log",
             "keep.log", "site", "docs", "_build", "env", ".venv", "m.egg-info", "README"]
    for _ in range(3000):
        path = "/".join(rng.choice(names) for _ in range(rng.randint(1, 5)))
        for shown in (path, path + "/"):
            assert rules.verdict(shown) == spec.check_file(shown).include, shown


def test_a_pattern_whose_groups_cannot_be_renamed_safely_is_never_joined() -> None:
    # "[(?P<x>]" is a set of characters; renaming "(?P<x>" in it would change the set
    spec = compile_lines(["*.log", "[(?P<x>]"])
    assert joined_patterns(spec) is None
    rules = IgnoreFile(spec)
    for path in ["P", "(", "x", ">", "a.log", "b"]:
        assert rules.verdict(path) == spec.check_file(path).include


def test_a_malformed_line_is_left_out_and_the_others_kept() -> None:
    spec = compile_lines(["secrets/", "bad\\", "*.key"])
    assert spec is not None
    assert spec.check_file("secrets/").include is True
    assert spec.check_file("id.key").include is True
    assert spec.check_file("notes.txt").include is None
    assert compile_lines(["# only a comment", "", "   "]) is None
