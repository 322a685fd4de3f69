"""The conformance kit finds what breaks at a model's call, and passes a toolset that is right.

``janito-probes`` advertises one toolset per broken tool (tests/helpers/probes/janito_probes);
``janito-goodkit`` one toolset that keeps every rule, with a class tool and function tools.
"""

from __future__ import annotations

import importlib
import json
import os
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
    "read_only_writes": ("LookUp", "changes_workspace"),
}
EXAMPLES = 10


@pytest.fixture(scope="module")
def kits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """janito-probes and janito-goodkit, installed in a folder on sys.path."""
    root = tmp_path_factory.mktemp("probes-site")
    toolsets = {f"probe_{module}": f"janito_probes.{module}" for module in [*PROBES, "gated"]}
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
    # a module without main() is a note, not a failure
    assert [(n.tool, n.check) for n in report.notes] == [("SaveNote", "main()"), ("ListNotes", "main()")]
    assert "python -m janito_core.harness janito_goodkit.notes" in report.notes[0].problem


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
    def service() -> Iterator[None]:
        os.environ["PROBE_SERVICE_URL"] = "http://127.0.0.1:9"
        try:
            yield
        finally:
            del os.environ["PROBE_SERVICE_URL"]

    report = check_toolset("probe_gated", max_examples=EXAMPLES, setup=service)
    assert report.reached["AskService"] >= EXAMPLES
    assert "PROBE_SERVICE_URL" not in os.environ


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
