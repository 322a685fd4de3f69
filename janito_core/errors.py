"""Exception types raised by janito-core.

Only programming mistakes raise: a bad decorator argument, an unknown toolset name
passed by code. Everything a model or a plugin does wrong becomes a structured result
or a recorded load error instead.
"""

from __future__ import annotations


class JanitoError(Exception):
    """Base class of every exception janito-core raises on purpose."""


class PermissionStringError(JanitoError, ValueError):
    """A permission string holds something other than the letters r, w and x."""


class ToolsetNotFoundError(JanitoError, LookupError):
    """No installed distribution advertises a toolset of that name."""

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        self.name = name
        self.suggestions = suggestions or []
        hint = f" (did you mean {', '.join(self.suggestions)}?)" if self.suggestions else ""
        super().__init__(f"no installed toolset is called {name!r}{hint}")

    def __str__(self) -> str:
        return str(self.args[0])


class ToolsetNotAllowedError(JanitoError, LookupError):
    """The toolset is installed but JANITO_TOOLSETS does not allow it to load."""


class WorkspaceError(JanitoError, ValueError):
    """A path resolves outside the workspace, or cannot be a path at all.

    ``error_type`` is what a tool's result should say: ``outside_workspace`` for a path
    that leaves the workspace, ``invalid_path`` for one that is no path (empty, NUL, not a
    string, unresolvable).
    """

    def __init__(self, path: object, reason: str, error_type: str = "outside_workspace") -> None:
        self.path = path
        self.reason = reason
        self.error_type = error_type
        super().__init__(f"{reason}: {path!r}")


class SecretStoreError(JanitoError):
    """The secrets store holds something janito cannot read back, so it will not write it.

    ``where`` names the store (the file's path, or the keyring entry). Nothing is changed:
    a store that cannot be parsed is never read as empty and never overwritten.
    """

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(
            f"the secrets store {where} {problem}; it was left as it is: repair it or move "
            "it away (`janito secrets set` then starts a new one)"
        )


class PluginValidationError(JanitoError):
    """A hook implementation does not match any janito hook specification."""


class JournalError(JanitoError):
    """A journal operation that cannot be done; ``path`` names what stopped it
    (``janito_core.journal``; a change the journal cannot record is not made)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
