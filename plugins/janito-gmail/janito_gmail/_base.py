"""What every mail tool shares: loading only with credentials, and safe results."""

from __future__ import annotations

from typing import Any, Callable

from janito_core import BaseTool
from janito_core.errors import SecretStoreError, WorkspaceError
from janito_core.scrub import scrub

from ._errors import CONFIGURATION, OUTSIDE_WORKSPACE, SERVER_ERROR, MailError
from ._settings import Settings, SettingsError, known_secrets, missing_credentials


class MailTool(BaseTool):
    """Base of the gmail toolset's tools (not a tool itself)."""

    open_world = True  # every tool talks to the mail servers

    @classmethod
    def should_load(cls) -> bool:
        reason = missing_credentials()
        if reason:
            return cls.skip(reason)
        return True

    def _secrets(self) -> list[str]:
        # asked anew each time: a call may obtain a new access token halfway through
        settings: Settings | None = getattr(self, "_settings", None)
        if settings is not None:
            return settings.secrets()
        return getattr(self, "_secret_values", None) or known_secrets()

    def say(self, kind: str, message: str) -> None:
        """A progress report with any secret removed."""
        text = scrub(message, self._secrets())
        getattr(self, f"report_{kind}")(text)

    def execute(self, action: Callable[[Settings], dict[str, Any]], **echo: Any) -> dict[str, Any]:
        """Run ``action`` with fresh settings; every failure becomes a result, scrubbed.

        ``echo`` holds the inputs to repeat in a failure so the model sees what it asked.
        """
        self._secret_values: list[str] = []
        self._settings: Settings | None = None
        try:
            try:
                settings = Settings.load()
            except (SettingsError, SecretStoreError):
                self._secret_values = known_secrets()
                raise
            self._settings = settings
            result = action(settings)
        except MailError as exc:
            result = {"success": False, "error": exc.message, "error_type": exc.error_type,
                      **echo, **exc.extra}
        except (SettingsError, SecretStoreError) as exc:
            result = {"success": False, "error": str(exc), "error_type": CONFIGURATION, **echo}
        except WorkspaceError as exc:
            # outside_workspace, or invalid_path / symlink_loop for a path that is no way in
            result = {"success": False, "error": str(exc),
                      "error_type": exc.error_type or OUTSIDE_WORKSPACE, **echo}
        except Exception as exc:  # a bug here must still answer with a result
            result = {"success": False, "error": f"{type(self).__name__} failed: "
                      f"{type(exc).__name__}: {exc}", "error_type": SERVER_ERROR, **echo}
        result = scrub(result, self._secrets())
        if not result.get("success"):
            self.say("error", str(result.get("error")))
        return result  # type: ignore[no-any-return]
