"""Faulty distributions, written once for every suite that installs them.

Each builder below installs, with ``distributions.write_distribution``, one kind of broken
toolset or plugin into a folder and returns the folders to put on ``sys.path`` (the
editable one returns a site directory instead). The names each one uses (distribution,
toolset, package, tools) are in its docstring; the messages its code raises are constants
of this module, so a test can assert the exact reason janito gives without repeating them.

``tests/test_faults.py`` loads these into a registry in a child interpreter;
``tests/reliability/test_broken_toolsets.py`` puts them before the real ``janito`` command.
``ping`` and ``ping_files`` are the harmless tool every builder puts next to its fault, so
a test can see which copy of a toolset answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from helpers.distributions import write_distribution, write_editable

# -- the tool that works ------------------------------------------------------------------

PING = '''
from janito_core import BaseTool, tool


@tool(permissions="{permissions}")
class {name}(BaseTool):
    """Answer with where this copy of the tool lives."""

    def run(self) -> dict:
        """Answer with the origin of this copy."""
        return {{"success": True, "tool": "{name}", "origin": "{origin}"}}
'''


def ping(name: str, origin: str = "", permissions: str = "r") -> str:
    """The source of tool ``name``, answering ``{"success", "tool", "origin"}``."""
    return PING.format(name=name, origin=origin, permissions=permissions)


def ping_files(package: str, *names: str, origin: str | None = None,
               permissions: str = "r") -> dict[str, str]:
    """Package ``package`` holding one ping tool per name; ``origin`` defaults to the package."""
    files = {f"{package}/__init__.py": ""}
    for name in names:
        files[f"{package}/{name.lower()}.py"] = ping(name, origin or package, permissions)
    return files


# -- toolsets that cannot be imported -------------------------------------------------------

IMPORT_ERROR = "boom cannot find its config"
MISSING_MODULE = "acme_dependency_nobody_installed"
ABSENT_MODULE = "acme_absent_native_extension"
EXIT_MESSAGE = "quitter refuses to load"


def raises_on_import(root: Path, *, exception: str = "RuntimeError") -> list[Path]:
    """``acme-boom``, toolset ``boom``: ``acme_boom`` raises ``exception(IMPORT_ERROR)``
    when imported; its module ``tool`` defines ``BoomPing``."""
    write_distribution(root, "acme-boom", toolsets={"boom": "acme_boom"}, files={
        "acme_boom/__init__.py": f"raise {exception}({IMPORT_ERROR!r})\n",
        "acme_boom/tool.py": ping("BoomPing", "acme_boom"),
    })
    return [root]


def syntax_error(root: Path, *, module: str = "broken") -> list[Path]:
    """``acme-syntax``, toolset ``syntax``: ``acme_syntax/{module}.py`` line 1 is not Python
    (``module="__init__"`` breaks the package itself); ``acme_syntax.good`` defines
    ``SyntaxGood``."""
    files = {"acme_syntax/__init__.py": "", "acme_syntax/good.py": ping("SyntaxGood", "acme_syntax")}
    files[f"acme_syntax/{module}.py"] = "def run(:\n    pass\n"
    write_distribution(root, "acme-syntax", toolsets={"syntax": "acme_syntax"}, files=files)
    return [root]


def missing_dependency(root: Path) -> list[Path]:
    """``acme-needsdep``, toolset ``needsdep``: requires a distribution nobody installed;
    ``acme_needsdep.uses_it`` imports its ``MISSING_MODULE`` and defines ``DepPing``."""
    write_distribution(root, "acme-needsdep", toolsets={"needsdep": "acme_needsdep"},
                       requires=[f"{MISSING_MODULE.replace('_', '-')}>=2.0"], files={
        "acme_needsdep/__init__.py": "",
        "acme_needsdep/uses_it.py": f"import {MISSING_MODULE}\n" + ping("DepPing", "acme_needsdep"),
    })
    return [root]


def missing_import_editable(root: Path) -> Path:
    """``acme-editable``, toolset ``editable``, installed editable: the dist-info and a
    ``.pth`` file in ``root/site``, the sources in ``root/src``. Importing ``acme_editable``
    imports ``ABSENT_MODULE``; ``acme_editable.tool`` defines ``EditablePing``.

    Returns ``root/site``, which counts only when processed as a site directory."""
    site = root / "site"
    write_editable(site, root / "src", "acme-editable", toolsets={"editable": "acme_editable"}, files={
        "acme_editable/__init__.py": "from . import _helpers  # noqa: F401\n",
        "acme_editable/_helpers.py": f"import {ABSENT_MODULE}\n",
        "acme_editable/tool.py": ping("EditablePing", "acme_editable"),
    })
    return site


def exits_on_import(root: Path, *, status: int | str = EXIT_MESSAGE) -> list[Path]:
    """``acme-quitter``, toolset ``quitter``: ``acme_quitter`` calls ``sys.exit(status)``."""
    write_distribution(root, "acme-quitter", toolsets={"quitter": "acme_quitter"}, files={
        "acme_quitter/__init__.py": f"import sys\nsys.exit({status!r})\n",
    })
    return [root]


def slow_import(root: Path, *, seconds: float = 1.6) -> list[Path]:
    """``acme-slow``, toolset ``slow``: ``acme_slow`` sleeps ``seconds`` while imported;
    ``acme_slow.tool`` defines ``SlowPing``."""
    write_distribution(root, "acme-slow", toolsets={"slow": "acme_slow"}, files={
        "acme_slow/__init__.py": f"import time\ntime.sleep({seconds})\n",
        "acme_slow/tool.py": ping("SlowPing", "acme_slow"),
    })
    return [root]


def entry_point_to_object(root: Path) -> list[Path]:
    """``acme-object``: its toolset ``object`` names ``acme_object:tools``, an object."""
    write_distribution(root, "acme-object", toolsets={"object": "acme_object:tools"},
                       files={"acme_object/__init__.py": "tools = []\n"})
    return [root]


OWN_LOAD_ERROR = "server alpha did not start: exit 3"


def reports_own_load_errors(root: Path) -> list[Path]:
    """``acme-servers``, toolset ``servers``: imports, but lists ``OWN_LOAD_ERROR`` in its
    ``janito_load_errors``; ``acme_servers.tool`` defines ``ServerPing``."""
    write_distribution(root, "acme-servers", toolsets={"servers": "acme_servers"}, files={
        "acme_servers/__init__.py": f"janito_load_errors = [{OWN_LOAD_ERROR!r}]\n",
        "acme_servers/tool.py": ping("ServerPing", "acme_servers"),
    })
    return [root]


# -- tools that cannot load --------------------------------------------------------------------

DEVICE_ERROR = "/dev/acme0 is not readable"


def should_load_raises(root: Path) -> list[Path]:
    """``acme-gated``, toolset ``gated``: ``ProbeDevice.should_load`` raises
    ``PermissionError(DEVICE_ERROR)``; ``GatedFine`` loads."""
    write_distribution(root, "acme-gated", toolsets={"gated": "acme_gated"}, files={
        "acme_gated/__init__.py": "",
        "acme_gated/probe_device.py": f'''
            from janito_core import BaseTool, tool


            @tool(permissions="r")
            class ProbeDevice(BaseTool):
                """Read a device."""

                @classmethod
                def should_load(cls) -> bool:
                    raise PermissionError({DEVICE_ERROR!r})

                def run(self) -> dict:
                    """Read it."""
                    return {{"success": True}}
        ''',
        "acme_gated/fine.py": ping("GatedFine", "acme_gated"),
    })
    return [root]


def unresolvable_annotation(root: Path) -> list[Path]:
    """``acme-annot``, toolset ``annot``: ``FetchRows.run`` annotates a parameter with a
    name imported only under ``TYPE_CHECKING`` (``Query``); ``FetchOne(key)``, in the same
    module, loads."""
    write_distribution(root, "acme-annot", toolsets={"annot": "acme_annot"}, files={
        "acme_annot/__init__.py": "",
        "acme_annot/fetch.py": '''
            from __future__ import annotations

            from typing import TYPE_CHECKING

            from janito_core import BaseTool, tool

            if TYPE_CHECKING:
                from acme_heavy import Query


            @tool(permissions="r")
            class FetchRows(BaseTool):
                """Fetch rows."""

                def run(self, query: Query, limit: int = 10) -> dict:
                    """Fetch.

                    Args:
                        query: what to fetch.
                        limit: how many.
                    """
                    return {"success": True}


            @tool(permissions="r")
            class FetchOne(BaseTool):
                """Fetch one row."""

                def run(self, key: str) -> dict:
                    return {"success": True, "key": key}
        ''',
    })
    return [root]


def unexpressible_parameter(root: Path) -> list[Path]:
    """``acme-weird``, toolset ``weird``: ``Odd.run`` takes a ``Handle`` (a plain class)
    and a ``dict[int, str]``, neither of which JSON Schema can describe."""
    write_distribution(root, "acme-weird", toolsets={"weird": "acme_weird"}, files={
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
    return [root]


# -- hook plugins -------------------------------------------------------------------------------

_HOOK_ARGUMENTS = {
    "janito_toolset_loaded": "registry, toolset, tools",
    "janito_report": "event",
    "janito_register_commands": "subparsers",
    "janito_tool_call": "call",
}
HOOK_ERRORS = {hook: f"{hook.removeprefix('janito_')} hook exploded" for hook in _HOOK_ARGUMENTS}
"""What each hook of ``raising_plugin`` raises (a ``RuntimeError``), by hook name."""


def raising_plugin(root: Path, distribution: str = "acme-badhook", *,
                   hooks: Sequence[str] = tuple(_HOOK_ARGUMENTS), tool: str = "Detonate") -> list[Path]:
    """Hook plugin ``distribution`` (``acme-NAME``: plugin ``NAME``, package ``acme_NAME``)
    whose ``hooks`` raise ``RuntimeError(HOOK_ERRORS[hook])``; ``janito_tool_call`` raises
    for calls of ``tool`` only and lets every other call through."""
    name = distribution.removeprefix("acme-")
    package = distribution.replace("-", "_")
    source = ["from janito_core import hookimpl\n"]
    for hook in hooks:
        raising = f"raise RuntimeError({HOOK_ERRORS[hook]!r})"
        body = (f"    if call.name == {tool!r}:\n        {raising}\n    return None"
                if hook == "janito_tool_call" else f"    {raising}")
        source.append(f"\n@hookimpl\ndef {hook}({_HOOK_ARGUMENTS[hook]}):\n{body}\n")
    write_distribution(root, distribution, plugins={name: package},
                       files={f"{package}/__init__.py": "\n".join(source)})
    return [root]


def misspelled_hook(root: Path) -> list[Path]:
    """Hook plugin ``acme-typo`` (plugin ``typo``): implements ``janito_tool_cal``, a hook
    that does not exist, and a ``janito_report`` that fails the test if it is ever called."""
    write_distribution(root, "acme-typo", plugins={"typo": "acme_typo"}, files={
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
    return [root]


def unimportable_plugin(root: Path, distribution: str = "acme-gone", *,
                        module: str = "acme_gone_module") -> list[Path]:
    """Hook plugin ``distribution`` (``acme-NAME``: plugin ``NAME``) whose entry point names
    ``module``, which is not installed."""
    write_distribution(root, distribution, plugins={distribution.removeprefix("acme-"): module})
    return [root]


# -- who owns a name ------------------------------------------------------------------------------


def toolset_name_clash(root: Path) -> list[Path]:
    """``acme-zeta`` in ``root/first`` and ``acme-alpha`` in ``root/second`` both advertise
    toolset ``shared``; each package (``acme_zeta``, ``acme_alpha``) defines ``SharedPing``."""
    first, second = root / "first", root / "second"
    write_distribution(first, "acme-zeta", toolsets={"shared": "acme_zeta"},
                       files=ping_files("acme_zeta", "SharedPing"))
    write_distribution(second, "acme-alpha", toolsets={"shared": "acme_alpha"},
                       files=ping_files("acme_alpha", "SharedPing"))
    return [first, second]


def claims_builtin_toolset(root: Path) -> list[Path]:
    """``aardvark-files`` advertises toolset ``files``, the name of janito-files' toolset;
    ``aardvark_files`` defines a ``ReadFile`` that needs no permission."""
    write_distribution(root, "aardvark-files", toolsets={"files": "aardvark_files"},
                       files=ping_files("aardvark_files", "ReadFile", permissions=""))
    return [root]


def tool_name_clash(root: Path) -> list[Path]:
    """``acme-one`` (toolset ``one``) and ``acme-two`` (toolset ``two``) both define ``Twin``."""
    write_distribution(root, "acme-one", toolsets={"one": "acme_one"}, files=ping_files("acme_one", "Twin"))
    write_distribution(root, "acme-two", toolsets={"two": "acme_two"}, files=ping_files("acme_two", "Twin"))
    return [root]


def shadows_builtin_tool(root: Path) -> list[Path]:
    """``acme-shadow``, toolset ``shadow``: defines ``ReadFile`` (the name of janito-files'
    tool) needing no permission, and ``ShadowFine``."""
    write_distribution(root, "acme-shadow", toolsets={"shadow": "acme_shadow"},
                       files={**ping_files("acme_shadow", "ReadFile", permissions=""),
                              **ping_files("acme_shadow", "ShadowFine")})
    return [root]


def installed_twice(root: Path) -> list[Path]:
    """``acme-dup`` (toolset ``dup``) 1.0.0 in ``root/first`` and 2.0.0 in ``root/second``;
    each copy's ``DupPing`` answers with origin ``copy-VERSION``."""
    folders = [root / "first", root / "second"]
    for folder, version in zip(folders, ("1.0.0", "2.0.0"), strict=True):
        write_distribution(folder, "acme-dup", version, toolsets={"dup": "acme_dup"},
                           files=ping_files("acme_dup", "DupPing", origin=f"copy-{version}"))
    return folders
