"""The conformance kit finds what breaks at a model's call, and passes a toolset that is right.

``janito-probes`` advertises one toolset per broken tool (tests/helpers/probes/janito_probes);
``janito-goodkit`` one toolset that keeps every rule, with a class tool and function tools.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.distributions import PROBES_SOURCE, clean_env, sources_of_package, write_distribution

from janito_core.testing import ConformanceError, check, check_toolset

PROBES = {
    # toolset (module of janito_probes): (tool, the one check it must fail)
    "returns_list": ("ReturnsList", "invalid_result"),
    "raises": ("Divide", "tool_exception"),
    "returns_bytes": ("Encode", "invalid_result"),
    "returns_nan": ("Average", "invalid_result"),
    "no_success": ("Shout", "no_success"),
    "failure_without_error": ("CheckEven", "failure_without_error"),
    "prints": ("CountWords", "stdout"),
    "writes_fd1": ("CountLetters", "stdout"),
    "sleeps": ("WaitAWhile", "slow"),
    "reads_outside": ("ReadBeside", "reads_outside"),
    "lists_outside": ("ListFolder", "reads_outside"),
    "writes_outside": ("SaveNote", "changes_outside"),
    "creates_outside": ("OpenDatabase", "changes_outside"),
    "read_only_writes": ("LookUp", "changes_workspace"),
}
#: Probes the static checks catch, before any call: no input to show.
STATIC_PROBES = {
    "option_collision": ("DescribeProject", "option"),
    "broken_annotation": ("Halve", "types"),
}
#: Probes that conform, each kept for a test of its own.
OTHER_PROBES = ["gated", "valid_data", "any_value", "names_anywhere"]
EXAMPLES = 10


@pytest.fixture(scope="module")
def kits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """janito-probes and janito-goodkit, installed in a folder on sys.path."""
    root = tmp_path_factory.mktemp("probes-site")
    toolsets = {f"probe_{module}": f"janito_probes.{module}"
                for module in [*PROBES, *STATIC_PROBES, *OTHER_PROBES]}
    write_distribution(root, "janito-probes", "0.0.1", toolsets=toolsets,
                       files=sources_of_package("janito_probes"))
    write_distribution(root, "janito-goodkit", "1.0.0", toolsets={"goodkit": "janito_goodkit"},
                       files=sources_of_package("janito_goodkit"))
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        importlib.invalidate_caches()


@pytest.mark.parametrize("module", sorted(PROBES))
def test_each_probe_is_flagged_with_the_input_that_showed_it(
    kits: Path, module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool, expected = PROBES[module]
    budget = 0.3 if expected == "slow" else 5.0
    calls = tmp_path / "calls"
    monkeypatch.setenv("JANITO_PROBE_CALLS", str(calls))
    report = check(f"probe_{module}", max_examples=EXAMPLES, call_budget=budget, seed=20)
    assert report.tools == [tool]
    assert report.checks_of(tool) == {expected}, str(report)
    assert not report.checks_of(None), str(report)
    finding = report.findings[0]
    assert finding.input is not None and isinstance(json.loads(finding.input), dict)
    assert finding.fix
    if expected == "slow":  # the 30 s sleep was interrupted, and not called again
        assert calls.read_text(encoding="utf-8").splitlines() == ["called"]
        assert finding.count == 1 and "interrupted" in finding.problem


@pytest.mark.parametrize("module", sorted(STATIC_PROBES))
def test_each_static_probe_is_flagged(kits: Path, module: str) -> None:
    tool, expected = STATIC_PROBES[module]
    report = check(f"probe_{module}", max_examples=EXAMPLES, seed=20)
    assert report.tools == [tool]
    assert report.checks_of(tool) == {expected}, str(report)
    assert not report.checks_of(None), str(report)


def test_what_each_finding_says(kits: Path) -> None:
    def only(module: str, **options: object) -> str:
        report = check(f"probe_{module}", max_examples=EXAMPLES, seed=3, **options)  # type: ignore[arg-type]
        return report.findings[0].problem

    assert "returned list" in only("returns_list")
    assert "bytes" in only("returns_bytes")
    assert "nan" in only("returns_nan")
    assert "ZeroDivisionError" in only("raises") and "raises.py:" in only("raises")
    assert "'progress: counting\\n'" in only("writes_fd1")
    assert "no error or error_type" in only("failure_without_error")
    assert "../janito-sentinel.txt" in only("reads_outside") or "../outside/sentinel.txt" in only(
        "reads_outside")
    assert "names in ../outside" in only("lists_outside")
    assert "created .lookup-cache" in only("read_only_writes")
    # a name that did not exist, beside the workspace or through the link out
    assert re.search(r"created (outside/)?janito-new-[0-9a-f]+-(beside|through-link|climbing|absolute)",
                     only("creates_outside"))
    said = only("option_collision")
    assert said.startswith("parameter 'workspace' cannot be given as --workspace: "
                           "`janito run DescribeProject --workspace` sets janito's own --workspace "
                           "(the folder tools may work in")
    assert "`python -m janito_probes.option_collision --workspace` is the harness's" in said
    report = check("probe_broken_annotation", max_examples=EXAMPLES)
    [finding] = report.findings
    assert "annotations cannot be resolved" in finding.problem and "Decimal" in finding.problem
    assert "should_load" not in finding.fix and "annotation" in finding.fix
    assert "Halve" not in report.not_exercised  # a finding, not a tool that could not load here


def test_check_toolset_raises_naming_tool_input_and_fix(kits: Path) -> None:
    with pytest.raises(ConformanceError) as caught:
        check_toolset("probe_no_success", max_examples=EXAMPLES, seed=1)
    text = str(caught.value)
    assert "Shout: [no_success]" in text
    assert "input: {" in text and "fix: add \"success\"" in text
    assert caught.value.report.seed == 1


def test_the_good_toolset_passes_and_its_calls_reach_run(kits: Path) -> None:
    report = check_toolset("goodkit", max_examples=EXAMPLES)
    assert sorted(report.tools) == ["LineStats", "ListNotes", "SaveNote"]
    assert all(report.reached[name] >= EXAMPLES for name in report.tools), report.reached
    assert not report.not_exercised
    # a module without main() is a note, not a failure; the harness is told which tool
    mains = [n for n in report.notes if n.check == "main()"]
    assert [n.tool for n in mains] == ["SaveNote", "ListNotes"]
    assert "`python -m janito_core.harness janito_goodkit.notes:SaveNote`" in mains[0].problem
    # a tool name another installed (not autoloaded) toolset has too is a note as well
    [clash] = [n for n in report.notes if n.check == "clash"]
    assert clash.tool == "SaveNote"
    assert "toolset 'probe_writes_outside' (janito-probes) has a tool called SaveNote" in clash.problem


def test_a_skipped_tool_is_reported_and_the_author_can_enable_it(kits: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    env = {"PROBE_EXECUTED_MARKER": str(marker)}
    report = check_toolset("probe_gated", max_examples=EXAMPLES, env=env)
    assert report.not_exercised["AskService"].startswith("skipped here: PROBE_SERVICE_URL is not set")
    assert report.not_exercised["RunSnippet"].startswith("needs x")
    assert "AskService" not in report.reached
    assert not marker.exists()  # generated text never runs as code unless asked
    assert "PROBE_EXECUTED_MARKER" not in os.environ  # the environment is given back

    report = check_toolset("probe_gated", max_examples=EXAMPLES,
                           env={**env, "PROBE_SERVICE_URL": "http://127.0.0.1:9"})
    assert report.reached["AskService"] >= EXAMPLES
    assert "AskService" not in report.not_exercised

    @contextmanager
    def service(workspace: Path) -> Iterator[None]:
        os.environ["PROBE_SERVICE_URL"] = "http://127.0.0.1:9"
        try:
            yield
        finally:
            del os.environ["PROBE_SERVICE_URL"]

    report = check_toolset("probe_gated", max_examples=EXAMPLES, setup=service)
    assert report.reached["AskService"] >= EXAMPLES
    assert "PROBE_SERVICE_URL" not in os.environ


def test_setup_seeds_the_workspace_so_calls_reach_what_needs_real_data(kits: Path) -> None:
    # read_settings returns a list only for a settings file that parses: the kit's own
    # seed files never get it there
    assert check("probe_valid_data", max_examples=EXAMPLES, seed=5).ok
    seen: list[Path] = []

    def settings(workspace: Path) -> None:
        seen.append(workspace)
        assert (workspace / "notes.txt").is_file()  # beside the kit's own seed files
        (workspace / "config").mkdir()
        (workspace / "config" / "settings.json").write_text('{"theme": "dark"}')

    report = check("probe_valid_data", max_examples=EXAMPLES, seed=5, setup=settings)
    assert report.checks_of("ReadSettings") == {"invalid_result"}, str(report)
    [finding] = report.findings
    assert "returned list" in finding.problem and "config/settings.json" in (finding.input or "")
    assert not seen[0].exists()  # the check's workspace is gone with it


def test_a_workspace_changed_by_a_call_is_put_back_as_setup_left_it(kits: Path) -> None:
    # goodkit's SaveNote overwrites notes: every call must still start from setup's files
    def seed(workspace: Path) -> None:
        (workspace / "kept.txt").write_text("kept\n")

    report = check_toolset("goodkit", max_examples=EXAMPLES, setup=seed, seed=9)
    assert report.reached["LineStats"] >= EXAMPLES


def test_parameters_of_any_type_are_not_held_against_the_author(kits: Path) -> None:
    # their schema takes null; were dispatch to refuse it, that would be janito's fault
    report = check_toolset("probe_any_value", max_examples=EXAMPLES, seed=4)
    assert report.reached["DescribeValue"] >= EXAMPLES
    assert not [n for n in report.notes if n.check in ("rejected_valid_input", "coverage")]
    [guard] = [n for n in report.notes if n.check == "main()"]
    assert "has main() but no `if __name__ == \"__main__\":`" in guard.problem
    assert "python -m janito_probes.any_value` imports the module and does nothing" in guard.problem


@contextmanager
def _on_path(site: Path) -> Iterator[None]:
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        importlib.invalidate_caches()


_ONE_TOOL = '''
from typing import Any

from janito_core import tool


@tool(permissions="")
def {function}(text: str) -> dict[str, Any]:
    """Count the words of a text.

    Args:
        text: The text.
    """
    return {{"success": True, "words": len(text.split())}}
'''


def test_an_import_that_waits_is_flagged_in_wall_time(tmp_path: Path) -> None:
    # a second and a half of sleep takes no CPU time: measured in CPU time, it passed
    site = tmp_path / "site"
    write_distribution(site, "acme-sleepy", "1.0.0", toolsets={"sleepy": "acme_sleepy"}, files={
        "acme_sleepy/__init__.py": "import time\n\ntime.sleep(1.5)  # as a network call would\n",
        "acme_sleepy/count.py": _ONE_TOOL.format(function="count_words"),
    })
    with _on_path(site):
        report = check("sleepy", max_examples=3)
    assert report.checks_of(None) == {"import time"}, str(report)
    # Over the budget of 1 s, whatever the load: the time spent queued for a busy CPU is
    # left out, and a loaded virtual machine's run-queue clock may count a few hundredths
    # of the sleep among it, so the figure can fall just short of the 1.5 s slept.
    assert report.import_seconds is not None and report.import_seconds > 1.2
    [finding] = report.findings
    assert re.search(r"took 1\.\d\d s \(budget 1\.00 s\), 0\.\d\d s of it computing and "
                     r"1\.\d\d s waiting", finding.problem), finding.problem


def test_a_second_import_that_fails_does_not_stand_for_a_slow_first(tmp_path: Path) -> None:
    # imports are counted in a file: the kit's own (1) is quick, the measured one (2)
    # sleeps, the one measured again (3) fails at once, which measures nothing
    site = tmp_path / "site"
    counter = tmp_path / "imports"
    write_distribution(site, "acme-moody", "1.0.0", toolsets={"moody": "acme_moody"}, files={
        "acme_moody/__init__.py": (
            "import pathlib, time\n"
            f"counter = pathlib.Path({str(counter)!r})\n"
            "with counter.open('a') as handle:\n"
            "    handle.write('x')\n"
            "seen = len(counter.read_text())\n"
            "if seen == 2:\n"
            "    time.sleep(1.5)\n"
            "elif seen >= 3:\n"
            "    raise ImportError('a server that went away')\n"),
        "acme_moody/count.py": _ONE_TOOL.format(function="count_words"),
    })
    with _on_path(site):
        report = check("moody", max_examples=3)
    assert counter.read_text() == "xxx"
    assert report.checks_of(None) == {"import time"}, str(report)
    assert report.import_seconds is not None and report.import_seconds > 1.2


def test_a_tool_named_like_one_of_a_default_toolset_is_flagged(tmp_path: Path) -> None:
    # janito loads files first: a WordCount of one's own would never load beside it
    site = tmp_path / "site"
    write_distribution(site, "acme-files", "1.0.0", toolsets={"files": "acme_files"}, files={
        "acme_files/__init__.py": "",
        "acme_files/word_count.py": _ONE_TOOL.format(function="word_count"),
    })
    write_distribution(site, "acme-wordtools", "1.0.0", toolsets={"wordtools": "acme_wordtools"},
                       files={"acme_wordtools/__init__.py": "",
                              "acme_wordtools/word_count.py": _ONE_TOOL.format(function="word_count"),
                              "acme_wordtools/letters.py": _ONE_TOOL.format(function="count_letters")})
    with _on_path(site):
        report = check("wordtools", max_examples=3)
    assert report.checks_of("WordCount") == {"clash"}, str(report)
    assert not report.checks_of("CountLetters")
    [finding] = report.findings
    # the real janito-files when it is installed (it wins the name), else acme-files
    assert re.match(r"toolset 'files' \((janito|acme)-files\), which janito loads by default, has "
                    r"a tool called WordCount too: wherever it is installed, `janito run -t "
                    r"wordtools WordCount` runs that one", finding.problem), finding.problem


def test_x_tools_run_generated_calls_only_when_the_author_opts_in(kits: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    report = check_toolset("probe_gated", max_examples=EXAMPLES, run_execute_tools=True,
                           env={"PROBE_EXECUTED_MARKER": str(marker)})
    assert report.reached["RunSnippet"] >= EXAMPLES
    assert marker.read_text().count("ran") >= EXAMPLES


def test_denied_tools_are_not_exercised(kits: Path) -> None:
    report = check_toolset("goodkit", max_examples=3, privileges="r")
    assert report.not_exercised == {
        "SaveNote": "denied: needs write (-w) permission, which is not granted"}


def test_a_harness_runs_a_module_without_main(kits: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")

    def harness(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "janito_core.harness", *args], cwd=tmp_path,
                              env=clean_env({"NO_COLOR": "1"}, path=[kits]), capture_output=True,
                              text=True, timeout=60)

    listed = harness("janito_goodkit.notes:ListNotes", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["notes"] == ["a.txt"]
    saved = harness("janito_goodkit.notes:SaveNote", "b.txt", "hello")
    assert saved.returncode == 0 and (tmp_path / "b.txt").read_text() == "hello"
    assert "saved b.txt" in saved.stderr  # the reporter, on stderr
    several = harness("janito_goodkit.notes", "x")
    assert several.returncode == 2 and "several tools" in several.stderr
    assert "janito_goodkit.notes:SaveNote" in several.stderr
    single = harness("janito_probes.no_success", "hi", "--json")
    assert single.returncode == 0 and json.loads(single.stdout)["text"] == "HI"
    missing = harness("janito_goodkit.nowhere")
    assert missing.returncode == 2 and "cannot import janito_goodkit.nowhere" in missing.stderr
    unknown = harness("janito_goodkit.notes:Nope")
    assert unknown.returncode == 2 and "has no tool 'Nope'" in unknown.stderr
    usage = harness("janito_goodkit.line_stats:LineStats", "--help")
    assert usage.returncode == 0 and "python -m janito_core.harness janito_goodkit.line_stats" in usage.stdout


def test_probe_sources_are_the_ones_installed() -> None:
    assert (PROBES_SOURCE / "janito_probes" / "sleeps.py").exists()
    for module in PROBES:
        assert (PROBES_SOURCE / "janito_probes" / f"{module}.py").exists(), module


def test_no_call_names_a_folder_above_the_kits_own_or_the_home_folder(
        kits: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The strings the kit draws (here from a pattern of slashes, dots and tildes) never
    lead to the root, the folders above the kit's temporary folder, or into the home
    folder: a tool under test that acts where it is told (removes the path, say) acts
    inside the kit's folders only."""
    calls = tmp_path / "calls"
    monkeypatch.setenv("JANITO_PROBE_CALLS", str(calls))
    assert check("probe_names_anywhere", max_examples=50, seed=7).ok
    home = os.path.realpath(os.path.expanduser("~"))
    named = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    assert len(named) >= 50
    for workspace, path in named:
        sandbox = os.path.dirname(workspace)
        led = os.path.realpath(os.path.join(workspace, os.path.expanduser(path)))
        assert led == sandbox or led.startswith(sandbox + os.sep), path
        assert not (led + os.sep).startswith(home + os.sep) or \
            led.startswith(sandbox + os.sep), path
