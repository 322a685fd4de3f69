"""BaseTool: the class every tool derives from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from .cancellation import current_token
from .reporter import PREFIXES, ReportEvent, emit, permission_color

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping
    from typing import TypeAlias

    from pydantic import BaseModel

    from .cancellation import CancelToken
    from .workspace import Workspace

    #: What ``run()`` may return: a JSON object (a dict, or a TypedDict such as
    #: ``Counted | Failure``), or a pydantic model answered as its JSON object.
    Answer: TypeAlias = Mapping[str, Any] | BaseModel


class BaseTool(ABC):
    """A tool a model can call.

    Subclasses implement ``run()`` with typed keyword parameters and return a dict with
    at least ``success``. The class docstring's first line is the description the model
    sees; ``run()``'s docstring documents each parameter. Decorate the class with
    ``@tool(permissions=...)`` to make it a tool. ``run()`` may be ``async def``: dispatch
    awaits it on an event loop instead of calling it in a thread.
    """

    _tool_permissions: ClassVar[str] = ""
    _load_skip_reason: ClassVar[str | None] = None
    #: Set on a class (not inherited) to describe parameters known only at run time,
    #: such as a mounted MCP server's tools: a JSON Schema object whose properties
    #: ``run(**kwargs)`` receives, validated by the same rules as type hints.
    input_schema: ClassVar[dict[str, Any] | None] = None
    #: True for a tool that reaches systems beyond this host and its workspace (the web,
    #: a mail server, a cloud drive), whatever its permissions: MCP clients see it as
    #: ``openWorldHint``. Tools that execute (``x``) are always taken to reach them.
    open_world: ClassVar[bool] = False
    #: The parameters of ``run()`` that name workspace paths the tool writes (creates,
    #: changes, moves or removes; a parameter may hold one path or a list of them).
    #: ``execute_tool_calls`` runs the calls of one turn at the same time, except that
    #: calls writing one path, or a path and a folder above it, and calls naming a path
    #: that another call of the turn writes, run one after the other in the order of the
    #: calls. None, on a tool with ``w`` or ``x`` permissions, means "may change anything
    #: in the workspace": such a call runs after every earlier call of its turn and before
    #: every later one. ``()`` says it writes nothing there (a tool that only changes
    #: things elsewhere, such as sending a message).
    writes_paths: ClassVar[tuple[str, ...] | None] = None
    #: The parameters of ``run()`` that name workspace paths the tool reads (one path or a
    #: list). A policy's path rules (``janito_core.policy``) decide on the paths named in
    #: ``reads_paths`` and ``writes_paths`` before the call runs; whatever is declared,
    #: every path the tool touches through ``self.workspace`` is checked again as it runs.
    reads_paths: ClassVar[tuple[str, ...] | None] = None

    def __init__(self, workspace: Workspace | None = None) -> None:
        self._workspace = workspace

    @abstractmethod
    def run(self, *args: Any, **kwargs: Any) -> Answer | Awaitable[Answer]:
        """Do the tool's work and return a JSON-serialisable dict with ``success``."""

    @classmethod
    def should_load(cls) -> bool:
        """Whether the tool can work here; on False, say why in ``_load_skip_reason``."""
        return True

    @classmethod
    def sandbox_status(cls) -> str | None:
        """One line on how code this tool runs is confined, or None for a tool that runs none.

        ``janito tools`` shows it for each tool that answers (and ``--json`` adds it as the
        row's ``sandbox`` field). It must be cheap: no process may be started to answer.
        """
        return None

    @classmethod
    def skip(cls, reason: str) -> bool:
        """Record why the tool cannot load and return False, for use in ``should_load``."""
        cls._load_skip_reason = reason
        return False

    @property
    def workspace(self) -> Workspace:
        """The workspace this call runs in: the registry's, or the current directory."""
        if self._workspace is None:
            from .workspace import Workspace  # on first use: about 2 ms that listing never needs

            self._workspace = Workspace()
        return self._workspace

    @workspace.setter
    def workspace(self, value: Workspace) -> None:
        self._workspace = value

    @property
    def cancel_token(self) -> CancelToken | None:
        """This call's cancellation signal (None when its caller cannot cancel it).

        A long-running tool checks ``cancel_token.cancelled`` (or calls ``check()``, which
        raises ``CallCancelled``) between steps of its work.
        """
        return current_token()

    def resolve_path(self, path: object) -> str:
        """The absolute real path a model's ``path`` leads to (WorkspaceError if outside).

        Kept for compatibility, and for display or for handing a path to another program
        only: never open, list, write or remove what it returns. Between this check and
        that use a folder on the path can be swapped for a link to anywhere; act through
        ``self.workspace`` (``open_file``, ``read_bytes``, ``write_file``, ``locate`` ...),
        which resolves from a descriptor of the workspace and cannot be led out.
        """
        return self.workspace.resolve(path)

    def display_path(self, real_path: str) -> str:
        """How a resolved path is shown back to the model."""
        return self.workspace.display(real_path)

    def _report(self, kind: str, message: str, end: str, color: str | None) -> None:
        emit(ReportEvent(kind, str(message), color, end, type(self).__name__, PREFIXES[kind]))

    def report_start(self, message: str, end: str = "\n") -> None:
        self._report("start", message, end, permission_color(self._tool_permissions))

    def report_progress(self, message: str, end: str = "\n") -> None:
        self._report("progress", message, end, permission_color(self._tool_permissions))

    def report_result(self, message: str, end: str = "\n") -> None:
        self._report("result", message, end, permission_color(self._tool_permissions))

    def report_error(self, message: str, end: str = "\n") -> None:
        self._report("error", message, end, "\033[31m")

    def report_warning(self, message: str, end: str = "\n") -> None:
        self._report("warning", message, end, "\033[33m")


#: The code flag of an ``async def`` function (``inspect.CO_COROUTINE``, without the
#: import of ``inspect`` that costs start-up about 10 ms).
_CO_COROUTINE = 0x80


def is_async_function(function: object) -> bool:
    """Whether ``function`` is an ``async def`` function or method.

    Read from its code object alone, on every call of a tool: a plain function that
    returns an awaitable (one wrapping a coroutine, or marked by
    ``inspect.markcoroutinefunction``) is not seen as async here, and dispatch awaits what
    it returns instead.
    """
    try:
        return bool(function.__code__.co_flags & _CO_COROUTINE)  # type: ignore[attr-defined]
    except AttributeError:
        return False


def runs_async(cls: type) -> bool:
    """Whether ``cls.run()`` is ``async def`` (checked on every call: cheap, never cached, so
    a class whose ``run`` is replaced is seen as it is now)."""
    try:
        return bool(cls.run.__code__.co_flags & _CO_COROUTINE)  # type: ignore[attr-defined]
    except AttributeError:
        return False
