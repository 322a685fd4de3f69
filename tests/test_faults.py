"""Faults janito survives, each made with real distributions on sys.path.

Every test writes installed distributions (dist-info folders with METADATA,
entry_points.txt and RECORD, next to their packages) into temporary folders and runs
janito in a child interpreter with those folders on its path. In every case the child
exits normally, the failure names the distribution and the reason, and the healthy
toolset beside it still loads and answers calls. The faulty distributions come from
``helpers/faults.py``, which the reliability suite's ``test_broken_toolsets.py`` puts
before the real ``janito`` command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import faults
from helpers.distributions import ProbeResult, clean_env, probe, write_distribution, write_editable
from helpers.faults import ping, ping_files


def healthy(site: Path) -> None:
    """The well-behaved neighbour every fault is tested next to."""
    write_distribution(site, "janito-healthy", toolsets={"healthy": "acme_healthy"},
                       files=ping_files("acme_healthy", "Ping"))


def assert_healthy_still_works(seen: ProbeResult) -> None:
    assert seen.record("Ping")["status"] == "loaded"
    answers = [c for c in seen["calls"] if c.get("tool") == "Ping"]
    assert answers and all(a["success"] for a in answers), seen["calls"]


def only_error(seen: ProbeResult, distribution: str) -> dict:
    errors = seen.errors_of(distribution)
    assert len(errors) == 1, seen["errors"]
    error = errors[0]
    assert error["row"]["status"] == "error"
    assert error["row"]["name"] is None
    assert error["row"]["distribution"] == error["distribution"]
    return error


# -- toolsets that cannot be imported -------------------------------------------------------


def test_a_toolset_that_raises_on_import(sandbox: Path) -> None:
    healthy(sandbox)
    faults.raises_on_import(sandbox)
    seen = probe([sandbox], add=["boom", "healthy"], calls=[("Ping", {}), ("BoomPing", {})])
    error = only_error(seen, "acme-boom")
    assert error["toolset"] == "boom"
    assert error["kind"] == "import"
    assert error["reason"] == f"cannot import acme_boom: RuntimeError: {faults.IMPORT_ERROR}"
    assert seen["added"]["boom"] == {"tools": []}
    assert_healthy_still_works(seen)
    assert seen["calls"][1]["error_type"] == "unknown_tool"


def test_an_autoloaded_toolset_that_fails_does_not_stop_the_others(sandbox: Path) -> None:
    healthy(sandbox)
    faults.raises_on_import(sandbox, exception="ImportError")
    seen = probe([sandbox], autoload=["boom", "healthy"], calls=[("Ping", {})])
    assert only_error(seen, "acme-boom")["reason"].endswith(f"ImportError: {faults.IMPORT_ERROR}")
    assert_healthy_still_works(seen)


def test_a_syntax_error_in_the_package(sandbox: Path) -> None:
    healthy(sandbox)
    faults.syntax_error(sandbox, module="__init__")
    seen = probe([sandbox], add=["syntax", "healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-syntax")
    assert error["reason"].startswith("cannot import acme_syntax: SyntaxError: ")
    assert "acme_syntax/__init__.py:1" in error["reason"]
    assert_healthy_still_works(seen)


def test_a_syntax_error_in_one_module_spares_the_others(sandbox: Path) -> None:
    healthy(sandbox)
    faults.syntax_error(sandbox)
    seen = probe([sandbox], add=["syntax", "healthy"], calls=[("Ping", {}), ("SyntaxGood", {})])
    error = only_error(seen, "acme-syntax")
    assert error["module"] == "acme_syntax.broken"
    assert error["reason"].startswith("cannot import acme_syntax.broken: SyntaxError")
    assert "acme_syntax/broken.py:1" in error["reason"]
    assert seen.record("SyntaxGood")["status"] == "loaded"
    assert seen["calls"][1]["origin"] == "acme_syntax"
    assert_healthy_still_works(seen)


def test_a_missing_third_party_dependency(sandbox: Path) -> None:
    healthy(sandbox)
    faults.missing_dependency(sandbox)
    seen = probe([sandbox], add=["needsdep", "healthy"], calls=[("Ping", {}), ("DepPing", {})])
    error = only_error(seen, "acme-needsdep")
    assert error["toolset"] == "needsdep"
    assert error["reason"] == (
        "cannot import acme_needsdep.uses_it: ModuleNotFoundError: "
        f"No module named '{faults.MISSING_MODULE}'"
    )
    assert seen["calls"][1]["error_type"] == "unknown_tool"
    assert_healthy_still_works(seen)


def test_a_toolset_that_calls_sys_exit_on_import(sandbox: Path) -> None:
    healthy(sandbox)
    faults.exits_on_import(sandbox, status=7)
    seen = probe([sandbox], add=["quitter", "healthy"], calls=[("Ping", {})])
    assert only_error(seen, "acme-quitter")["reason"] == "cannot import acme_quitter: SystemExit: 7"
    assert_healthy_still_works(seen)


def test_an_entry_point_naming_an_object_instead_of_a_package(sandbox: Path) -> None:
    healthy(sandbox)
    faults.entry_point_to_object(sandbox)
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-object")
    assert error["toolset"] == "object"
    assert "must name a package or module" in error["reason"]
    assert "object" not in seen["toolsets"]
    assert_healthy_still_works(seen)


# -- tools that cannot load --------------------------------------------------------------------


def test_should_load_that_raises(sandbox: Path) -> None:
    healthy(sandbox)
    faults.should_load_raises(sandbox)
    seen = probe([sandbox], add=["gated", "healthy"], calls=[("Ping", {}), ("ProbeDevice", {})])
    record = seen.record("ProbeDevice")
    assert record["status"] == "skipped"
    assert record["distribution"] == "acme-gated"
    assert record["reason"] == f"should_load() raised PermissionError: {faults.DEVICE_ERROR}"
    assert seen["calls"][1]["error_type"] == "tool_unavailable"
    assert faults.DEVICE_ERROR in seen["calls"][1]["error"]
    assert seen["errors"] == []
    assert_healthy_still_works(seen)


def test_an_annotation_that_cannot_be_resolved(sandbox: Path) -> None:
    healthy(sandbox)
    faults.unresolvable_annotation(sandbox)
    seen = probe([sandbox], add=["annot", "healthy"],
                 calls=[("Ping", {}), ("FetchRows", {"query": "x"}), ("FetchOne", {"key": "k"})])
    record = seen.record("FetchRows")
    assert record["status"] == "error"
    assert "FetchRows.run() has an annotation that cannot be resolved" in record["reason"]
    assert "NameError" in record["reason"] and "Query" in record["reason"]
    assert seen["calls"][1]["error_type"] == "tool_unavailable"
    assert seen["calls"][2] == {"success": True, "key": "k"}
    assert_healthy_still_works(seen)


def test_a_parameter_type_that_cannot_become_a_schema(sandbox: Path) -> None:
    healthy(sandbox)
    faults.unexpressible_parameter(sandbox)
    seen = probe([sandbox], add=["weird", "healthy"], calls=[("Ping", {})])
    record = seen.record("Odd")
    assert record["status"] == "error"
    assert "Odd.run() parameter 'handle'" in record["reason"]
    assert "cannot be expressed as JSON Schema" in record["reason"]
    assert_healthy_still_works(seen)


# -- hook plugins ---------------------------------------------------------------------------------

CHATTY_TOOL = '''
from janito_core import BaseTool, tool


@tool()
class Chatty(BaseTool):
    """Report progress."""

    def run(self) -> dict:
        self.report_result("chatty finished")
        return {"success": True}


@tool()
class Detonate(BaseTool):
    """Never runs: a plugin raises before it can."""

    def run(self) -> dict:
        return {"success": True}
'''


def test_a_hook_plugin_that_raises(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-chatty", toolsets={"chatty": "acme_chatty"},
                       files={"acme_chatty/__init__.py": "", "acme_chatty/chatty.py": CHATTY_TOOL})
    faults.raising_plugin(sandbox)
    seen = probe([sandbox], add=["healthy", "chatty"],
                 calls=[("Ping", {}), ("Chatty", {}), ("Detonate", {})])
    errors = seen.errors_of("acme-badhook")
    reasons = {e["reason"] for e in errors}
    assert all(e["kind"] == "hook" for e in errors)
    for hook in ("janito_toolset_loaded", "janito_report"):
        assert (f"plugin 'acme-badhook:badhook' raised in {hook}: "
                f"RuntimeError: {faults.HOOK_ERRORS[hook]}") in reasons
    # The report still reaches stderr, once, through the fallback renderer.
    assert seen.stderr.count("chatty finished") == 1
    assert seen["calls"][1] == {"success": True}
    # The tool-call hook raised for Detonate: the call fails, naming the plugin.
    detonate = seen["calls"][2]
    assert detonate["success"] is False
    assert detonate["error_type"] == "plugin_error"
    assert "acme-badhook:badhook" in detonate["error"]
    assert faults.HOOK_ERRORS["janito_tool_call"] in detonate["error"]
    assert_healthy_still_works(seen)


def test_a_misspelled_hook_is_an_error_not_silence(sandbox: Path) -> None:
    healthy(sandbox)
    faults.misspelled_hook(sandbox)
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-typo")
    assert error["kind"] == "plugin"
    assert "implements an unknown hook" in error["reason"]
    assert "janito_tool_cal" in error["reason"]
    assert "acme-typo:typo" not in [name for name, _ in seen["plugins"] or []]
    assert_healthy_still_works(seen)


def test_a_plugin_that_cannot_be_imported(sandbox: Path) -> None:
    healthy(sandbox)
    faults.unimportable_plugin(sandbox)
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-gone")
    assert error["kind"] == "plugin"
    assert error["reason"].startswith("plugin 'gone' cannot be loaded: ModuleNotFoundError")
    assert_healthy_still_works(seen)


def test_janito_plugins_restricts_which_plugins_load(sandbox: Path) -> None:
    healthy(sandbox)
    faults.raising_plugin(sandbox)
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})], env={"JANITO_PLUGINS": ""})
    assert seen["errors"] == []
    assert "acme_badhook" not in seen["modules"]
    assert_healthy_still_works(seen)


def test_a_toolset_package_can_implement_hooks(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-hooked", toolsets={"hooked": "acme_hooked"}, files={
        "acme_hooked/__init__.py": '''
            from janito_core import hookimpl

            SEEN = []


            @hookimpl
            def janito_toolset_loaded(registry, toolset, tools):
                SEEN.append((toolset, list(tools)))


            @hookimpl(wrapper=True)
            def janito_tool_call(call):
                result = yield
                result["audited_by"] = "acme-hooked"
                return result
        ''',
        "acme_hooked/hooked_ping.py": ping("HookedPing", "hooked"),
    })
    seen = probe([sandbox], add=["hooked", "healthy"], calls=[("Ping", {}), ("HookedPing", {})])
    assert seen["errors"] == []
    assert seen["calls"][0]["audited_by"] == "acme-hooked"
    assert seen["calls"][1]["audited_by"] == "acme-hooked"
    assert ("acme-hooked:acme_hooked", "acme-hooked") in [tuple(p) for p in seen["plugins"]]


# -- who owns a name --------------------------------------------------------------------------------


def test_two_distributions_advertising_one_toolset_name(tmp_path: Path) -> None:
    first, second = faults.toolset_name_clash(tmp_path)
    healthy(first)
    outcomes = []
    for order in ([first, second], [second, first]):
        seen = probe(order, add=["shared", "healthy"], calls=[("SharedPing", {}), ("Ping", {})])
        assert seen["toolsets"]["shared"]["distribution"] == "acme-alpha"
        assert seen["calls"][0]["origin"] == "acme_alpha"
        clash = [e for e in seen["errors"] if e["kind"] == "clash"]
        assert len(clash) == 1
        assert clash[0]["toolset"] == "shared"
        assert clash[0]["distribution"] == "acme-alpha, acme-zeta"
        assert "acme-alpha (used) and acme-zeta (ignored)" in clash[0]["reason"]
        assert "acme_zeta" not in seen["modules"]
        assert_healthy_still_works(seen)
        outcomes.append((seen["toolsets"]["shared"], clash))
    assert outcomes[0] == outcomes[1]


def test_the_janito_named_distribution_owns_its_toolset_name(sandbox: Path) -> None:
    healthy(sandbox)
    faults.claims_builtin_toolset(sandbox)
    write_distribution(sandbox, "janito-files", toolsets={"files": "real_files"},
                       files=ping_files("real_files", "ReadFile"))
    seen = probe([sandbox], add=["files", "healthy"], calls=[("ReadFile", {}), ("Ping", {})])
    assert seen["toolsets"]["files"]["distribution"] == "janito-files"
    assert seen["calls"][0]["origin"] == "real_files"
    (clash,) = [e for e in seen["errors"] if e["kind"] == "clash"]
    assert clash["distribution"] == "janito-files, aardvark-files"
    assert "janito-files (used) and aardvark-files (ignored)" in clash["reason"]
    assert_healthy_still_works(seen)


def test_the_owner_rule_is_the_documented_function() -> None:
    from janito_core.discovery import ToolsetSpec, choose_owner

    specs = [ToolsetSpec("mail", d, "1", d.replace("-", "_")) for d in
             ("zz-mail", "janito-mail", "aa-mail")]
    for rotation in range(3):
        ordered = specs[rotation:] + specs[:rotation]
        winner, clash = choose_owner("mail", ordered)
        assert winner.distribution == "janito-mail"
        assert clash is not None and clash.distribution == "janito-mail, aa-mail, zz-mail"
    winner, clash = choose_owner("mail", [specs[0]])
    assert winner is specs[0] and clash is None


def test_two_toolsets_defining_the_same_tool_name(sandbox: Path) -> None:
    healthy(sandbox)
    faults.tool_name_clash(sandbox)
    for order, kept, dropped in ((["one", "two"], "one", "two"), (["two", "one"], "two", "one")):
        seen = probe([sandbox], add=[*order, "healthy"], calls=[("Twin", {}), ("Ping", {})])
        assert seen.record("Twin")["toolset"] == kept
        assert seen["calls"][0]["origin"] == f"acme_{kept}"
        (error,) = [e for e in seen["errors"] if e["kind"] == "clash"]
        assert error["distribution"] == f"acme-{dropped}"
        assert error["toolset"] == dropped
        assert f"toolset {kept!r} (acme-{kept}); the first one is kept" in error["reason"]
        assert seen["added"][dropped]["tools"] == []
        assert_healthy_still_works(seen)


def test_the_same_distribution_found_twice_on_sys_path(tmp_path: Path) -> None:
    first, second = faults.installed_twice(tmp_path)
    healthy(first)
    seen = probe([first, second], add=["dup", "healthy"], calls=[("DupPing", {}), ("Ping", {})])
    spec = seen["toolsets"]["dup"]
    assert (spec["version"], spec["location"]) == ("1.0.0", str(first))
    assert seen["calls"][0]["origin"] == "copy-1.0.0"
    (warning,) = seen["warnings"]
    assert "acme-dup is installed twice" in warning
    assert str(first) in warning and str(second) in warning
    assert not [e for e in seen["errors"] if e["kind"] == "clash"]
    assert_healthy_still_works(seen)


def test_the_same_folder_twice_on_sys_path_is_no_duplicate(sandbox: Path) -> None:
    healthy(sandbox)
    seen = probe([sandbox, sandbox], add=["healthy"], calls=[("Ping", {})])
    assert seen["warnings"] == [] and seen["errors"] == []
    assert_healthy_still_works(seen)


# -- editable installs ---------------------------------------------------------------------------


def test_an_editable_install_through_a_pth_file(tmp_path: Path) -> None:
    site, source = tmp_path / "site-packages", tmp_path / "src" / "acme-edit"
    healthy(site)
    write_editable(site, source, "acme-edit", "0.3.0", toolsets={"edit": "acme_edit"},
                   files={"acme_edit/__init__.py": "", "acme_edit/p.py": ping("Edited", "v1")})
    seen = probe(sitedirs=[site], add=["edit", "healthy"], calls=[("Edited", {}), ("Ping", {})])
    spec = seen["toolsets"]["edit"]
    assert (spec["distribution"], spec["version"], spec["location"]) == ("acme-edit", "0.3.0",
                                                                         str(site))
    assert seen["calls"][0]["origin"] == "v1"
    assert_healthy_still_works(seen)
    # Editable means the source folder is what runs: an edit shows without reinstalling.
    (source / "acme_edit" / "p.py").write_text(ping("Edited", "v2"), encoding="utf-8")
    again = probe(sitedirs=[site], add=["edit"], calls=[("Edited", {})])
    assert again["calls"][0]["origin"] == "v2"


def test_an_editable_install_shadowed_by_a_regular_one(tmp_path: Path) -> None:
    site, source, other = tmp_path / "site", tmp_path / "src", tmp_path / "other"
    healthy(site)
    write_editable(site, source, "acme-edit", "0.3.0", toolsets={"edit": "acme_edit"},
                   files={"acme_edit/__init__.py": "", "acme_edit/p.py": ping("Edited", "src")})
    write_distribution(other, "acme-edit", "0.2.0", toolsets={"edit": "acme_edit"},
                       files={"acme_edit/__init__.py": "", "acme_edit/p.py": ping("Edited", "wheel")})
    seen = probe([other], sitedirs=[site], add=["edit", "healthy"], calls=[("Edited", {})])
    # PYTHONPATH comes first on sys.path: Python imports that copy, and janito agrees.
    assert seen["toolsets"]["edit"]["version"] == "0.2.0"
    assert seen["calls"][0]["origin"] == "wheel"
    assert any("acme-edit is installed twice" in w for w in seen["warnings"])


def _uv() -> str | None:
    return shutil.which(os.environ.get("UV", "uv"))


@pytest.mark.skipif(_uv() is None, reason="uv is not installed")
def test_a_real_editable_install_made_by_uv(tmp_path: Path) -> None:
    project = tmp_path / "acme-real"
    (project / "acme_real").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "acme-real"\nversion = "0.4.0"\n\n'
        '[project.entry-points."janito.toolsets"]\nreal = "acme_real"\n\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["acme_real"]\n',
        encoding="utf-8",
    )
    (project / "acme_real" / "__init__.py").write_text("", encoding="utf-8")
    (project / "acme_real" / "p.py").write_text(ping("RealPing", "editable"), encoding="utf-8")
    venv = tmp_path / "venv"
    env = clean_env({"UV_OFFLINE": "1", "UV_NO_PROGRESS": "1"})
    made = subprocess.run([_uv(), "venv", "-q", "-p", sys.executable, str(venv)],  # type: ignore[list-item]
                          env=env, capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"uv cannot make a virtual environment here: {made.stderr.strip()}")
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [_uv(), "pip", "install", "-q", "--offline", "--no-deps", "-p", str(python), "-e",  # type: ignore[list-item]
         str(project)],
        env=env, capture_output=True, text=True, check=False,
    )
    if installed.returncode != 0:
        pytest.skip(f"an offline editable install is not possible here: {installed.stderr.strip()}")
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.strip())
    assert any(p.suffix == ".pth" for p in site.iterdir()), os.listdir(site)
    healthy(tmp_path / "healthy")
    seen = probe([tmp_path / "healthy"], sitedirs=[site], add=["real", "healthy"],
                 calls=[("RealPing", {}), ("Ping", {})])
    spec = seen["toolsets"]["real"]
    assert (spec["distribution"], spec["version"]) == ("acme-real", "0.4.0")
    assert seen["calls"][0]["origin"] == "editable"
    assert seen["errors"] == [] and seen["warnings"] == []
    assert_healthy_still_works(seen)


# -- everything at once -----------------------------------------------------------------------------


def test_many_faults_together_leave_the_host_working(tmp_path: Path) -> None:
    site, second = faults.toolset_name_clash(tmp_path)
    healthy(site)
    faults.raises_on_import(site)
    faults.syntax_error(site, module="__init__")
    faults.raising_plugin(site)
    healthy(second)
    seen = probe([site, second], autoload=["boom", "syntax", "shared", "healthy"],
                 calls=[("Ping", {}), ("SharedPing", {})])
    distributions = {e["distribution"] for e in seen["errors"]}
    assert {"acme-boom", "acme-syntax", "acme-badhook", "acme-alpha, acme-zeta"} <= distributions
    assert any("janito-healthy is installed twice" in w for w in seen["warnings"])
    assert seen["calls"][1]["origin"] == "acme_alpha"
    assert_healthy_still_works(seen)
    json.dumps(seen)  # everything the registry reports is plain data


def test_a_toolset_reports_its_own_load_errors(sandbox: Path) -> None:
    healthy(sandbox)
    faults.reports_own_load_errors(sandbox)
    seen = probe([sandbox], add=["servers", "healthy"], calls=[("Ping", {}), ("ServerPing", {})])
    error = only_error(seen, "acme-servers")
    assert error["toolset"] == "servers"
    assert error["kind"] == "toolset"
    assert error["reason"] == faults.OWN_LOAD_ERROR
    assert seen["calls"][1]["success"] is True
    assert_healthy_still_works(seen)
