"""Faults janito survives, each made with real distributions on sys.path.

Every test writes installed distributions (dist-info folders with METADATA,
entry_points.txt and RECORD, next to their packages) into temporary folders and runs
janito in a child interpreter with those folders on its path. In every case the child
exits normally, the failure names the distribution and the reason, and the healthy
toolset beside it still loads and answers calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.distributions import ProbeResult, clean_env, probe, write_distribution, write_editable

PING = '''
from janito_core import BaseTool, tool


@tool(permissions="r")
class {name}(BaseTool):
    """Answer with where this copy of the tool lives."""

    def run(self) -> dict:
        return {{"success": True, "tool": "{name}", "origin": "{origin}"}}
'''


def ping(name: str = "Ping", origin: str = "healthy") -> str:
    return PING.format(name=name, origin=origin)


def healthy(site: Path) -> None:
    """The well-behaved neighbour every fault is tested next to."""
    write_distribution(site, "janito-healthy", toolsets={"healthy": "acme_healthy"},
                       files={"acme_healthy/__init__.py": "", "acme_healthy/ping.py": ping()})


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
    write_distribution(sandbox, "acme-boom", toolsets={"boom": "acme_boom"}, files={
        "acme_boom/__init__.py": "raise RuntimeError('no config file for boom')\n",
        "acme_boom/tool.py": ping("BoomPing"),
    })
    seen = probe([sandbox], add=["boom", "healthy"], calls=[("Ping", {}), ("BoomPing", {})])
    error = only_error(seen, "acme-boom")
    assert error["toolset"] == "boom"
    assert error["kind"] == "import"
    assert error["reason"] == "cannot import acme_boom: RuntimeError: no config file for boom"
    assert seen["added"]["boom"] == {"tools": []}
    assert_healthy_still_works(seen)
    assert seen["calls"][1]["error_type"] == "unknown_tool"


def test_an_autoloaded_toolset_that_fails_does_not_stop_the_others(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-boom", toolsets={"boom": "acme_boom"},
                       files={"acme_boom/__init__.py": "raise ImportError('half installed')\n"})
    seen = probe([sandbox], autoload=["boom", "healthy"], calls=[("Ping", {})])
    assert only_error(seen, "acme-boom")["reason"].endswith("ImportError: half installed")
    assert_healthy_still_works(seen)


def test_a_syntax_error_in_the_package(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-syntax", toolsets={"syntax": "acme_syntax"},
                       files={"acme_syntax/__init__.py": "def broken(:\n    pass\n"})
    seen = probe([sandbox], add=["syntax", "healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-syntax")
    assert error["reason"].startswith("cannot import acme_syntax: SyntaxError: ")
    assert "acme_syntax/__init__.py:1" in error["reason"]
    assert_healthy_still_works(seen)


def test_a_syntax_error_in_one_module_spares_the_others(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-partial", toolsets={"partial": "acme_partial"}, files={
        "acme_partial/__init__.py": "",
        "acme_partial/good.py": ping("GoodPing", "partial"),
        "acme_partial/bad.py": "x = = 1\n",
    })
    seen = probe([sandbox], add=["partial", "healthy"], calls=[("Ping", {}), ("GoodPing", {})])
    error = only_error(seen, "acme-partial")
    assert error["module"] == "acme_partial.bad"
    assert error["reason"].startswith("cannot import acme_partial.bad: SyntaxError")
    assert "acme_partial/bad.py:1" in error["reason"]
    assert seen.record("GoodPing")["status"] == "loaded"
    assert seen["calls"][1]["origin"] == "partial"
    assert_healthy_still_works(seen)


def test_a_missing_third_party_dependency(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(
        sandbox, "acme-needsdep", toolsets={"needsdep": "acme_needsdep"},
        requires=["acme-not-installed-anywhere>=1.0"],
        files={
            "acme_needsdep/__init__.py": "",
            "acme_needsdep/uses_it.py": "import acme_not_installed_anywhere\n" + ping("DepPing"),
        },
    )
    seen = probe([sandbox], add=["needsdep", "healthy"], calls=[("Ping", {}), ("DepPing", {})])
    error = only_error(seen, "acme-needsdep")
    assert error["toolset"] == "needsdep"
    assert error["reason"] == (
        "cannot import acme_needsdep.uses_it: ModuleNotFoundError: "
        "No module named 'acme_not_installed_anywhere'"
    )
    assert seen["calls"][1]["error_type"] == "unknown_tool"
    assert_healthy_still_works(seen)


def test_a_toolset_that_calls_sys_exit_on_import(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-quitter", toolsets={"quitter": "acme_quitter"},
                       files={"acme_quitter/__init__.py": "import sys\nsys.exit(7)\n"})
    seen = probe([sandbox], add=["quitter", "healthy"], calls=[("Ping", {})])
    assert only_error(seen, "acme-quitter")["reason"] == "cannot import acme_quitter: SystemExit: 7"
    assert_healthy_still_works(seen)


def test_an_entry_point_naming_an_object_instead_of_a_package(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-object", toolsets={"object": "acme_object:tools"},
                       files={"acme_object/__init__.py": "tools = []\n"})
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-object")
    assert error["toolset"] == "object"
    assert "must name a package or module" in error["reason"]
    assert "object" not in seen["toolsets"]
    assert_healthy_still_works(seen)


# -- tools that cannot load --------------------------------------------------------------------


def test_should_load_that_raises(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-gated", toolsets={"gated": "acme_gated"}, files={
        "acme_gated/__init__.py": "",
        "acme_gated/probe_device.py": '''
            from janito_core import BaseTool, tool


            @tool(permissions="x")
            class ProbeDevice(BaseTool):
                """Talk to a device."""

                @classmethod
                def should_load(cls) -> bool:
                    raise PermissionError("/dev/acme0 is not readable")

                def run(self) -> dict:
                    return {"success": True}
        ''',
    })
    seen = probe([sandbox], add=["gated", "healthy"], calls=[("Ping", {}), ("ProbeDevice", {})])
    record = seen.record("ProbeDevice")
    assert record["status"] == "skipped"
    assert record["distribution"] == "acme-gated"
    assert record["reason"] == "should_load() raised PermissionError: /dev/acme0 is not readable"
    assert seen["calls"][1]["error_type"] == "tool_unavailable"
    assert "/dev/acme0 is not readable" in seen["calls"][1]["error"]
    assert seen["errors"] == []
    assert_healthy_still_works(seen)


def test_an_annotation_that_cannot_be_resolved(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-annot", toolsets={"annot": "acme_annot"}, files={
        "acme_annot/__init__.py": "",
        "acme_annot/fetch.py": '''
            from __future__ import annotations

            from typing import TYPE_CHECKING

            from janito_core import BaseTool, tool

            if TYPE_CHECKING:
                from acme_heavy import Query


            @tool(permissions="r")
            class Fetch(BaseTool):
                """Fetch rows."""

                def run(self, query: Query, limit: int = 10) -> dict:
                    return {"success": True}


            @tool(permissions="r")
            class FetchOne(BaseTool):
                """Fetch one row."""

                def run(self, key: str) -> dict:
                    return {"success": True, "key": key}
        ''',
    })
    seen = probe([sandbox], add=["annot", "healthy"],
                 calls=[("Ping", {}), ("Fetch", {"query": "x"}), ("FetchOne", {"key": "k"})])
    record = seen.record("Fetch")
    assert record["status"] == "skipped"
    assert "Fetch.run() has an annotation that cannot be resolved" in record["reason"]
    assert "NameError" in record["reason"] and "Query" in record["reason"]
    assert seen["calls"][1]["error_type"] == "tool_unavailable"
    assert seen["calls"][2] == {"success": True, "key": "k"}
    assert_healthy_still_works(seen)


def test_a_parameter_type_that_cannot_become_a_schema(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-weird", toolsets={"weird": "acme_weird"}, files={
        "acme_weird/__init__.py": "",
        "acme_weird/odd.py": '''
            from janito_core import BaseTool, tool


            class Handle:
                pass


            @tool()
            class Odd(BaseTool):
                """Take something JSON cannot carry."""

                def run(self, handle: Handle, table: dict[int, str]) -> dict:
                    return {"success": True}
        ''',
    })
    seen = probe([sandbox], add=["weird", "healthy"], calls=[("Ping", {})])
    record = seen.record("Odd")
    assert record["status"] == "skipped"
    assert "Odd.run() parameter 'handle'" in record["reason"]
    assert "cannot be expressed as JSON Schema" in record["reason"]
    assert_healthy_still_works(seen)


# -- hook plugins ---------------------------------------------------------------------------------

RAISING_PLUGIN = '''
from janito_core import hookimpl


@hookimpl
def janito_toolset_loaded(registry, toolset, tools):
    raise RuntimeError("loaded hook exploded")


@hookimpl
def janito_report(event):
    raise RuntimeError("report hook exploded")


@hookimpl
def janito_tool_call(call):
    if call.name == "Detonate":
        raise RuntimeError("call hook exploded")
    return None
'''

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
    write_distribution(sandbox, "acme-badhook", plugins={"badhook": "acme_badhook"},
                       files={"acme_badhook/__init__.py": RAISING_PLUGIN})
    seen = probe([sandbox], add=["healthy", "chatty"],
                 calls=[("Ping", {}), ("Chatty", {}), ("Detonate", {})])
    errors = seen.errors_of("acme-badhook")
    reasons = {e["reason"] for e in errors}
    assert all(e["kind"] == "hook" for e in errors)
    assert ("plugin 'acme-badhook:badhook' raised in janito_toolset_loaded: "
            "RuntimeError: loaded hook exploded") in reasons
    assert ("plugin 'acme-badhook:badhook' raised in janito_report: "
            "RuntimeError: report hook exploded") in reasons
    # The report still reaches stderr, once, through the fallback renderer.
    assert seen.stderr.count("chatty finished") == 1
    assert seen["calls"][1] == {"success": True}
    # The tool-call hook raised for Detonate: the call fails, naming the plugin.
    detonate = seen["calls"][2]
    assert detonate["success"] is False
    assert detonate["error_type"] == "plugin_error"
    assert "acme-badhook:badhook" in detonate["error"]
    assert "call hook exploded" in detonate["error"]
    assert_healthy_still_works(seen)


def test_a_misspelled_hook_is_an_error_not_silence(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-typo", plugins={"typo": "acme_typo"}, files={
        "acme_typo/__init__.py": '''
            from janito_core import hookimpl


            @hookimpl
            def janito_tool_cal(call):
                return call.refuse("never reached")


            @hookimpl
            def janito_report(event):
                raise AssertionError("a refused plugin must not receive events")
        ''',
    })
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-typo")
    assert error["kind"] == "plugin"
    assert "implements an unknown hook" in error["reason"]
    assert "janito_tool_cal" in error["reason"]
    assert "acme-typo:typo" not in [name for name, _ in seen["plugins"] or []]
    assert_healthy_still_works(seen)


def test_a_plugin_that_cannot_be_imported(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-gone", plugins={"gone": "acme_gone_module"})
    seen = probe([sandbox], add=["healthy"], calls=[("Ping", {})])
    error = only_error(seen, "acme-gone")
    assert error["kind"] == "plugin"
    assert error["reason"].startswith("plugin 'gone' cannot be loaded: ModuleNotFoundError")
    assert_healthy_still_works(seen)


def test_janito_plugins_restricts_which_plugins_load(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-badhook", plugins={"badhook": "acme_badhook"},
                       files={"acme_badhook/__init__.py": RAISING_PLUGIN})
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
    first, second = tmp_path / "first", tmp_path / "second"
    healthy(first)
    write_distribution(first, "acme-zeta", toolsets={"shared": "acme_zeta"},
                       files={"acme_zeta/__init__.py": "", "acme_zeta/p.py": ping("Shared", "zeta")})
    write_distribution(second, "acme-alpha", toolsets={"shared": "acme_alpha"},
                       files={"acme_alpha/__init__.py": "", "acme_alpha/p.py": ping("Shared", "alpha")})
    outcomes = []
    for order in ([first, second], [second, first]):
        seen = probe(order, add=["shared", "healthy"], calls=[("Shared", {}), ("Ping", {})])
        assert seen["toolsets"]["shared"]["distribution"] == "acme-alpha"
        assert seen["calls"][0]["origin"] == "alpha"
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
    write_distribution(sandbox, "aardvark-files", toolsets={"files": "aardvark_files"},
                       files={"aardvark_files/__init__.py": "",
                              "aardvark_files/p.py": ping("FilesPing", "aardvark")})
    write_distribution(sandbox, "janito-files", toolsets={"files": "real_files"},
                       files={"real_files/__init__.py": "",
                              "real_files/p.py": ping("FilesPing", "janito")})
    seen = probe([sandbox], add=["files", "healthy"], calls=[("FilesPing", {}), ("Ping", {})])
    assert seen["toolsets"]["files"]["distribution"] == "janito-files"
    assert seen["calls"][0]["origin"] == "janito"
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
    write_distribution(sandbox, "acme-one", toolsets={"one": "acme_one"},
                       files={"acme_one/__init__.py": "", "acme_one/p.py": ping("Twin", "one")})
    write_distribution(sandbox, "acme-two", toolsets={"two": "acme_two"},
                       files={"acme_two/__init__.py": "", "acme_two/p.py": ping("Twin", "two")})
    for order, kept, dropped in ((["one", "two"], "one", "two"), (["two", "one"], "two", "one")):
        seen = probe([sandbox], add=[*order, "healthy"], calls=[("Twin", {}), ("Ping", {})])
        assert seen.record("Twin")["toolset"] == kept
        assert seen["calls"][0]["origin"] == kept
        (error,) = [e for e in seen["errors"] if e["kind"] == "clash"]
        assert error["distribution"] == f"acme-{dropped}"
        assert error["toolset"] == dropped
        assert f"toolset {kept!r} (acme-{kept}); the first one is kept" in error["reason"]
        assert seen["added"][dropped]["tools"] == []
        assert_healthy_still_works(seen)


def test_the_same_distribution_found_twice_on_sys_path(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    healthy(first)
    write_distribution(first, "acme-dup", "1.0.0", toolsets={"dup": "acme_dup"},
                       files={"acme_dup/__init__.py": "", "acme_dup/p.py": ping("Dup", "first")})
    write_distribution(second, "acme-dup", "2.0.0", toolsets={"dup": "acme_dup"},
                       files={"acme_dup/__init__.py": "", "acme_dup/p.py": ping("Dup", "second")})
    seen = probe([first, second], add=["dup", "healthy"], calls=[("Dup", {}), ("Ping", {})])
    spec = seen["toolsets"]["dup"]
    assert (spec["version"], spec["location"]) == ("1.0.0", str(first))
    assert seen["calls"][0]["origin"] == "first"
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
    return shutil.which("uv")


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
    site, second = tmp_path / "site", tmp_path / "second"
    healthy(site)
    write_distribution(site, "acme-boom", toolsets={"boom": "acme_boom"},
                       files={"acme_boom/__init__.py": "raise RuntimeError('boom')\n"})
    write_distribution(site, "acme-syntax", toolsets={"syntax": "acme_syntax"},
                       files={"acme_syntax/__init__.py": "def (\n"})
    write_distribution(site, "acme-badhook", plugins={"badhook": "acme_badhook"},
                       files={"acme_badhook/__init__.py": RAISING_PLUGIN})
    write_distribution(site, "acme-one", toolsets={"twin": "acme_one"},
                       files={"acme_one/__init__.py": "", "acme_one/p.py": ping("Twin", "one")})
    write_distribution(second, "acme-two", toolsets={"twin": "acme_two"},
                       files={"acme_two/__init__.py": "", "acme_two/p.py": ping("Twin", "two")})
    write_distribution(second, "janito-healthy", toolsets={"healthy": "acme_healthy"},
                       files={"acme_healthy/__init__.py": "", "acme_healthy/ping.py": ping()})
    seen = probe([site, second], autoload=["boom", "syntax", "twin", "healthy"],
                 calls=[("Ping", {}), ("Twin", {})])
    distributions = {e["distribution"] for e in seen["errors"]}
    assert {"acme-boom", "acme-syntax", "acme-badhook", "acme-one, acme-two"} <= distributions
    assert any("janito-healthy is installed twice" in w for w in seen["warnings"])
    assert seen["calls"][1]["origin"] == "one"
    assert_healthy_still_works(seen)
    json.dumps(seen)  # everything the registry reports is plain data


def test_a_toolset_reports_its_own_load_errors(sandbox: Path) -> None:
    healthy(sandbox)
    write_distribution(sandbox, "acme-servers", toolsets={"servers": "acme_servers"}, files={
        "acme_servers/__init__.py": "janito_load_errors = ['server alpha did not start: exit 3']\n",
        "acme_servers/tool.py": ping("ServerPing"),
    })
    seen = probe([sandbox], add=["servers", "healthy"], calls=[("Ping", {}), ("ServerPing", {})])
    error = only_error(seen, "acme-servers")
    assert error["toolset"] == "servers"
    assert error["kind"] == "toolset"
    assert error["reason"] == "server alpha did not start: exit 3"
    assert seen["calls"][1]["success"] is True
    assert_healthy_still_works(seen)
