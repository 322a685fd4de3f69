"""janito's tools in llm, Simon Willison's command and library (docs/integrations.md).

In Python, ``tools(registry)`` gives one ``llm.Tool`` per tool, for ``model.chain(...,
tools=...)``; every call goes through janito's dispatch and the model reads janito's
JSON result. ``before_call(ask)`` is the chain's approval: it asks ``ask`` about each
call janito's policy asks about, and janito runs or declines the call as it was told.

On the command line, janito-core is an llm plugin (entry point ``llm``): each installed
janito toolset is an llm toolbox, ``JanitoFiles``, ``JanitoSystem``...
(``llm -T JanitoFiles "..."``; ``-T 'JanitoFiles("r")'`` gives read privileges only),
under the person's policy (``policy.toml``) and journal, as ``janito run`` is. A call
the policy asks about runs when llm asked the person about it (``--ta``, which asks
about every call) and they said yes; without ``--ta`` it answers janito's
``approval_required`` and nothing runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import llm

# ``_bridge`` (and with it dispatch) is imported on first use, not here: llm imports every
# plugin module when it starts, for each of its commands.

if TYPE_CHECKING:
    from ..policy import ApprovalRequest
    from ..registry import Registry

__all__ = ["before_call", "tools"]

_HOST = "llm"

#: How a person answers an ask: True to run the call, False or the reason to refuse it.
Ask = Callable[["ApprovalRequest"], Any]


class _Implementation:
    """One janito tool's implementation: the call, through dispatch."""

    def __init__(self, registry: Registry, name: str) -> None:
        self.registry = registry
        self.name = name
        #: The person's answers that ``before_call`` got for this tool, by tool call id,
        #: each with the arguments it was asked about (a yes is for those only).
        self.decided: dict[str, tuple[Any, Any]] = {}
        self._signature: Any = None
        from . import _bridge  # made when the tools are: dispatch is needed from now on

        self._call, self._text = _bridge.call, _bridge.text

    @property
    def __signature__(self) -> Any:
        """The tool's parameters (as ``llm tools list`` shows them), and ``llm_tool_call``,
        which tells llm to hand over the call (its id binds an approval). Made once: llm
        reads it on every call."""
        signature = self._signature
        if signature is None:
            import inspect

            wrapper = self.registry.get(self.name)
            shown = list(inspect.signature(wrapper).parameters.values()) if wrapper else []
            shown = [p for p in shown if p.kind is not inspect.Parameter.VAR_KEYWORD]
            shown.append(inspect.Parameter("llm_tool_call", inspect.Parameter.KEYWORD_ONLY,
                                           default=None))
            signature = self._signature = inspect.Signature(shown)
        return signature

    def __call__(self, llm_tool_call: Any = None, **arguments: Any) -> str:
        call_id = getattr(llm_tool_call, "tool_call_id", None)
        asked, decision = self.decided.pop(call_id, (None, None)) if call_id is not None \
            else (None, None)
        if asked != arguments:
            decision = None
        if decision is None and self.registry.policy is not None and _approved_by_the_command():
            decision = True
        return self._text(self._call(self.registry, self.name, arguments, call_id,
                                     decision=decision, host=_HOST))


def _approved_by_the_command() -> bool:
    """Whether this runs under ``llm ... --ta``: llm then asked the person about this
    very call, as the model made it, before running it, and they said yes.

    The llm command has no other way to tell a tool so than its own option, read from
    the running click command (its parameter ``tools_approve``).
    """
    try:
        import click
    except ImportError:
        return False
    context = click.get_current_context(silent=True)
    while context is not None:
        if context.params.get("tools_approve"):
            return True
        context = context.parent
    return False


def tools(registry: Registry | None = None,
          names: list[str] | tuple[str, ...] | None = None) -> list[llm.Tool]:
    """An ``llm.Tool`` for each tool ``names`` names (default: every loaded tool)."""
    from . import _bridge

    registry = _bridge.registry_or_default(registry)
    return [llm.Tool(name=tool.name, description=tool.description,
                     input_schema=tool.parameters,
                     implementation=_Implementation(registry, tool.name))
            for tool in _bridge.offered(registry, names)]


def before_call(ask: Ask | None = None, *, then: Callable[..., Any] | None = None
                ) -> Callable[[Any, Any], Any]:
    """A ``before_call`` for ``model.chain()``: each call of a janito tool that janito's
    policy asks about is put to ``ask`` (given the ``ApprovalRequest``; default: a
    question on the terminal, as llm's ``--ta`` asks), and janito runs or declines the
    call as it answered; the model reads janito's result either way. Calls of other
    tools go to ``then``, another ``before_call``, when given.
    """
    from . import _bridge

    asking = ask or _ask_on_the_terminal

    def before(tool: Any, tool_call: Any) -> Any:
        implementation = getattr(tool, "implementation", None)
        if not isinstance(implementation, _Implementation):
            return then(tool, tool_call) if then is not None else None
        asked = _bridge.request(implementation.registry, implementation.name,
                                tool_call.arguments, tool_call.tool_call_id)
        if asked is not None:
            implementation.decided[tool_call.tool_call_id] = (
                tool_call.arguments, _bridge.decision_of(asking(asked)))
        return None

    return before


def _ask_on_the_terminal(asked: ApprovalRequest) -> bool:
    import click

    click.echo(click.style(f"Tool call: {asked.summary()}", fg="yellow", bold=True), err=True)
    click.echo(f"  {asked.reason}", err=True)
    for path in asked.paths:
        click.echo(f"  {path['access']}s {path['path']}", err=True)
    try:
        return bool(click.confirm("Approve tool call?", err=True))
    except click.Abort:  # no answer (end of input, Ctrl-C) is a no
        return False


# ----------------------------------------------------------------------------- the plugin


class JanitoToolbox(llm.Toolbox):
    """One janito toolset as an llm toolbox; ``register_tools`` makes one class per
    installed toolset. ``privileges`` are janito's letters (``"rwx"`` by default, as the
    ``janito`` command grants everything when given no flag)."""

    toolset: ClassVar[str] = ""

    def __init__(self, privileges: str = "rwx") -> None:
        self._janito = _registry_for_the_command(self.toolset, privileges)

    def tools(self) -> Iterator[llm.Tool]:
        for made in tools(self._janito):
            made.plugin = getattr(self, "plugin", None)
            yield made

    @classmethod
    def method_tools(cls) -> list[llm.Tool]:
        """The toolbox's tools, for ``llm tools list``."""
        from ..registry import Registry

        registry = Registry(autoload=(), reports="off")
        registry.add_toolset(cls.toolset)
        return tools(registry)


def _registry_for_the_command(toolset: str, privileges: str) -> Registry:
    """The registry ``janito run`` would make in this folder: the person's policy (a
    policy that cannot be read stops it), the journal, every change undoable."""
    from ..policy import Policy
    from ..privileges import Privileges
    from ..registry import Registry

    registry = Registry(privileges=Privileges.from_string(privileges), autoload=(),
                        policy=Policy.load(os.path.realpath(os.getcwd())), journal=True)
    registry.add_toolset(toolset)
    return registry


def _toolbox_name(toolset: str) -> str:
    return "Janito" + "".join(part.capitalize() for part in toolset.replace("-", "_").split("_"))


@llm.hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """llm's hook: one toolbox per installed janito toolset (nothing is imported until a
    toolbox is used)."""
    from ..registry import Registry

    for name in sorted(Registry(autoload=()).toolsets()):
        toolbox = type(_toolbox_name(name), (JanitoToolbox,), {"toolset": name,
                                                                "__module__": __name__})
        register(toolbox, _toolbox_name(name))
