"""Broken toolsets, each a real installed distribution, seen through the real command.

Every case writes one or more distributions (``NAME-VERSION.dist-info`` next to the
package, as an installer leaves them; ``helpers/faults.py`` writes them, for this suite
and for ``tests/test_faults.py``) into temporary folders that the ``janito`` subprocess
finds on ``PYTHONPATH`` (or, for the editable case, through a ``.pth`` file that a
``sitecustomize`` processes). Then ``janito tools --json`` and ``janito toolsets
--json`` must exit 0 and print valid JSON, the failure must name the distribution and the
reason, the healthy toolsets (files, system) must load exactly as they do without the
broken one, a real tool call must still work, and ``--strict`` must exit non-zero.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import rel_support as rel
from helpers import faults


@dataclass
class Expected:
    """One failure the command must show."""

    distribution: str
    reason: str  # a fragment of the reason
    status: str = "error"  # of the tool's row, or of a row with name null when tool is None
    tool: str | None = None


@dataclass
class Case:
    kind: str
    build: Callable[[Path], list[Path]]  # writes the distributions, returns PYTHONPATH
    toolsets: tuple[str, ...]
    failures: list[Expected]
    toolset_errors: dict[str, str] = field(default_factory=dict)  # toolset -> reason fragment
    strict_fails: bool = True
    stderr: tuple[str, ...] = ()
    check: Callable[[list[dict[str, Any]], Any], None] | None = None


# -- the distributions (tests/helpers/faults.py writes each one) ---------------------------


def missing_dependency_editable(root: Path) -> list[Path]:
    """The editable install, its site directory processed by a ``sitecustomize``."""
    site = faults.missing_import_editable(root)
    boot = root / "boot"
    boot.mkdir()
    (boot / "sitecustomize.py").write_text(
        f"import site\nsite.addsitedir({str(site)!r})\n", encoding="utf-8")
    return [boot]


def hook_raises(root: Path) -> list[Path]:
    """acme-badhook raises in its load, report and command hooks; acme-badcall in the
    tool-call hook, for calls of GetCurrentTime."""
    faults.raising_plugin(root, hooks=["janito_toolset_loaded", "janito_report",
                                       "janito_register_commands"])
    faults.raising_plugin(root, "acme-badcall", hooks=["janito_tool_call"], tool="GetCurrentTime")
    return [root]


def toolset_name_clash(root: Path) -> list[Path]:
    """Two third parties share "shared"; a third claims the built-in "files"."""
    first, second = faults.toolset_name_clash(root)
    faults.claims_builtin_toolset(second)
    return [first, second]


def tool_name_clash(root: Path) -> list[Path]:
    """Two toolsets define Twin; a third defines ReadFile, without permissions."""
    faults.tool_name_clash(root)
    return faults.shadows_builtin_tool(root)


def many_faults(root: Path) -> list[Path]:
    paths = []
    for index, builder in enumerate((faults.raises_on_import, faults.syntax_error,
                                     faults.missing_dependency, faults.should_load_raises,
                                     faults.unresolvable_annotation, hook_raises)):
        paths += builder(root / f"f{index}")
    return paths


# -- extra checks ---------------------------------------------------------------------------------


def _row(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [r for r in rows if r.get("name") == name]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def check_clash(rows: list[dict[str, Any]], ctx: Any) -> None:
    # the janito-named distribution owns "files": ReadFile is the real one, with "r"
    assert _row(rows, "ReadFile")["distribution"] == "janito-files"
    assert _row(rows, "ReadFile")["permissions"] == "r"
    result = ctx.run(["run", "-t", "shared", "SharedPing"])
    assert result["success"] is True and result["origin"] == "acme_alpha", result


def check_tool_clash(rows: list[dict[str, Any]], ctx: Any) -> None:
    assert _row(rows, "Twin")["distribution"] == "acme-one"
    assert _row(rows, "ReadFile")["distribution"] == "janito-files"
    assert _row(rows, "ShadowFine")["status"] == "loaded"
    # the permission-less impostor cannot make ReadFile callable without read
    denied = ctx.run(["run", "-w", "-t", "one", "-t", "two", "-t", "shadow", "ReadFile",
                      "--args", '{"filepath": "a.txt"}'], code=1)
    assert denied["error_type"] == "permission_denied", denied


def check_duplicate(rows: list[dict[str, Any]], ctx: Any) -> None:
    row = _row(rows, "DupPing")
    assert row["status"] == "loaded" and row["distribution"] == "acme-dup"
    assert ctx.run(["run", "-t", "dup", "DupPing"])["origin"] == "copy-1.0.0"


def check_slow(rows: list[dict[str, Any]], ctx: Any) -> None:
    assert _row(rows, "SlowPing")["status"] == "loaded"


def check_hooks(rows: list[dict[str, Any]], ctx: Any) -> None:
    failed = ctx.run(["run", "GetCurrentTime"], code=1)
    assert failed["error_type"] == "plugin_error", failed
    assert "acme-badcall" in failed["error"]
    assert faults.HOOK_ERRORS["janito_tool_call"] in failed["error"]
    # a command added by plugins still works although one plugin's command hook raises
    done = rel.run_janito(["plugins", "--json"], env=ctx.env, cwd=ctx.cwd)
    assert done.returncode == 0, done.stderr
    names = {r.get("distribution") for r in rel.json_of(done)}
    assert {"acme-badhook", "acme-badcall"} <= names


CASES = [
    Case("import error", faults.raises_on_import, ("boom",),
         [Expected("acme-boom", f"cannot import acme_boom: RuntimeError: {faults.IMPORT_ERROR}")],
         {"boom": faults.IMPORT_ERROR}),
    Case("syntax error", faults.syntax_error, ("syntax",),
         [Expected("acme-syntax", "cannot import acme_syntax.broken: SyntaxError")],
         {"syntax": "SyntaxError"}),
    Case("missing third-party dependency", faults.missing_dependency, ("needsdep",),
         [Expected("acme-needsdep", f"No module named '{faults.MISSING_MODULE}'")],
         {"needsdep": faults.MISSING_MODULE}),
    Case("missing dependency (editable install, .pth)", missing_dependency_editable, ("editable",),
         [Expected("acme-editable", f"No module named '{faults.ABSENT_MODULE}'")],
         {"editable": faults.ABSENT_MODULE}),
    Case("should_load raising", faults.should_load_raises, ("gated",),
         [Expected("acme-gated", f"should_load() raised PermissionError: {faults.DEVICE_ERROR}",
                   "skipped", "ProbeDevice")]),
    Case("unresolvable annotation", faults.unresolvable_annotation, ("annot",),
         [Expected("acme-annot", "cannot be resolved", "error", "FetchRows")]),
    Case("hook implementation raising", hook_raises, (),
         [Expected("acme-badhook", "raised in janito_toolset_loaded: RuntimeError: "
                   + faults.HOOK_ERRORS["janito_toolset_loaded"])],
         check=check_hooks),
    Case("two distributions, one toolset name", toolset_name_clash, ("shared",),
         [Expected("acme-alpha, acme-zeta", "advertised by 2 distributions"),
          Expected("janito-files, aardvark-files", "advertised by 2 distributions")],
         {"shared": "advertised by 2 distributions"}, check=check_clash),
    Case("two tools, one name", tool_name_clash, ("one", "two", "shadow"),
         [Expected("acme-two", "tool 'Twin' of toolset 'two' (acme-two) has the name of a tool"),
          Expected("acme-shadow", "tool 'ReadFile' of toolset 'shadow' (acme-shadow)")],
         {"two": "has the name of a tool already loaded"}, check=check_tool_clash),
    Case("one distribution twice on sys.path", faults.installed_twice, ("dup",), [],
         strict_fails=False, stderr=("acme-dup is installed twice",), check=check_duplicate),
    Case("import taking seconds", faults.slow_import, ("slow",), [], strict_fails=False,
         stderr=("toolset 'slow' (acme-slow) took",), check=check_slow),
    Case("sys.exit at import", faults.exits_on_import, ("quitter",),
         [Expected("acme-quitter", f"SystemExit: {faults.EXIT_MESSAGE}")],
         {"quitter": faults.EXIT_MESSAGE}),
]


# -- the runs -------------------------------------------------------------------------------------


class Context:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.cwd = cwd

    def run(self, args: list[str], code: int = 0) -> dict[str, Any]:
        done = rel.run_janito(args, env=self.env, cwd=self.cwd)
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        data = rel.json_of(done)
        assert isinstance(data, dict) and isinstance(data.get("success"), bool), data
        return data


@pytest.fixture(scope="module")
def healthy_baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``{tool: status}`` of the files and system toolsets with nothing broken installed."""
    cwd = tmp_path_factory.mktemp("baseline")
    env = rel.base_env(tmp_path_factory.mktemp("config"))
    done = rel.run_janito(["tools", "--json"], env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    rows = rel.json_of(done)
    baseline = {r["name"]: r["status"] for r in rows if r["toolset"] in ("files", "system")}
    assert sum(1 for s in baseline.values() if s == "loaded") >= 10, rows
    return baseline


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_broken_toolset(case: Case, tmp_path: Path, healthy_baseline: dict[str, str]) -> None:
    paths = case.build(tmp_path / "dists")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "a.txt").write_text("alpha\n", encoding="utf-8")
    ctx = Context(rel.base_env(tmp_path / "config", path=paths), cwd)
    rel.fault_kind(case.kind)

    with_sets = [a for name in case.toolsets for a in ("-t", name)]
    (cwd / "a.txt").write_text("alpha beta\n", encoding="utf-8")
    done, done_sets, strict, strict_sets, answer_run = rel.run_many([
        ["tools", "--json", *with_sets],
        ["toolsets", "--json", *with_sets],
        ["tools", "--json", "--strict", *with_sets],
        ["toolsets", "--json", "--strict", *with_sets],
        ["run", "WordCount", "--args", '{"filepath": "a.txt"}'],
    ], env=ctx.env, cwd=cwd)

    assert done.returncode == 0, (done.stdout, done.stderr)
    rows = rel.json_of(done)
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    for row in rows:
        assert row["status"] in ("loaded", "skipped", "denied", "error"), row
        assert set(row) >= {"name", "toolset", "distribution", "status", "reason"}, row

    # every expected failure, with its distribution and reason
    for expected in case.failures:
        if expected.tool is None:
            matching = [r for r in rows if r["status"] == "error" and r["name"] is None
                        and r["distribution"] == expected.distribution
                        and expected.reason in (r["reason"] or "")]
        else:
            matching = [r for r in rows if r["name"] == expected.tool
                        and r["status"] == expected.status
                        and r["distribution"] == expected.distribution
                        and expected.reason in (r["reason"] or "")]
        assert matching, f"no row for {expected}:\n" + "\n".join(map(str, rows))
        assert expected.distribution.split(",")[0] in done.stderr, done.stderr
        rel.count("broken toolsets: failure rows checked")
    if not case.failures:
        assert not [r for r in rows if r["status"] == "error"], rows
    for fragment in case.stderr:
        assert fragment in done.stderr, done.stderr

    # the healthy toolsets load exactly as they do alone
    healthy = {r["name"]: r["status"] for r in rows if r["toolset"] in ("files", "system")
               and r["distribution"] in ("janito-files", "janito-system")}
    assert healthy == healthy_baseline

    # a real call still works
    assert answer_run.returncode == 0, (answer_run.stdout, answer_run.stderr)
    answer = rel.json_of(answer_run)
    assert answer["success"] is True and answer.get("words") == 2, answer

    # janito toolsets --json
    assert done_sets.returncode == 0, done_sets.stderr
    sets = {r["name"]: r for r in rel.json_of(done_sets)}
    assert sets["files"]["loaded"] is True and sets["system"]["loaded"] is True, sets
    for toolset, fragment in case.toolset_errors.items():
        assert fragment in (sets[toolset]["error"] or ""), sets[toolset]

    # --strict turns any failure into a non-zero exit, still with the JSON
    assert (strict.returncode != 0) is case.strict_fails, (strict.returncode, strict.stderr)
    assert rel.json_of(strict) == rows
    assert (strict_sets.returncode != 0) is case.strict_fails, strict_sets.stderr
    rel.json_of(strict_sets)

    if case.check is not None:
        case.check(rows, ctx)


def test_many_faults_at_once(tmp_path: Path, healthy_baseline: dict[str, str]) -> None:
    """Every import-time fault together: each is reported, the healthy toolsets load."""
    paths = many_faults(tmp_path / "dists")
    ctx = Context(rel.base_env(tmp_path / "config", path=paths), tmp_path)
    toolsets = ("boom", "syntax", "needsdep", "gated", "annot")
    done, strict = rel.run_many([["tools", "--json", *[a for n in toolsets for a in ("-t", n)]],
                                 ["tools", "--json", "--strict",
                                  *[a for n in toolsets for a in ("-t", n)]]],
                                env=ctx.env, cwd=ctx.cwd)
    assert done.returncode == 0, done.stderr
    rows = rel.json_of(done)
    for dist in ("acme-boom", "acme-syntax", "acme-needsdep", "acme-badhook"):
        assert any(r["status"] == "error" and r["distribution"] == dist for r in rows), dist
    assert _row(rows, "ProbeDevice")["status"] == "skipped"
    assert _row(rows, "FetchRows")["status"] == "error"
    healthy = {r["name"]: r["status"] for r in rows if r["toolset"] in ("files", "system")}
    assert healthy == healthy_baseline
    assert strict.returncode != 0
    rel.fault_kind("many faults together")
