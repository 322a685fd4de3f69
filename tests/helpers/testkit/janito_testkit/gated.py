"""Tools whose should_load() decides whether they load here."""

from __future__ import annotations

from typing import Any

from janito_core import BaseTool, tool
from janito_core.secrets import has_secret


@tool(permissions="r")
class NeedsToken(BaseTool):
    """Only loads when the testkit_token secret is present."""

    @classmethod
    def should_load(cls) -> bool:
        return has_secret("testkit_token") or cls.skip("the testkit_token secret is not set")

    def run(self) -> dict[str, Any]:
        return {"success": True}


@tool()
class SaysNo(BaseTool):
    """should_load() returns False without a reason."""

    @classmethod
    def should_load(cls) -> bool:
        return False

    def run(self) -> dict[str, Any]:
        return {"success": True}


@tool()
class LoadRaises(BaseTool):
    """should_load() raises."""

    @classmethod
    def should_load(cls) -> bool:
        raise OSError("probe device missing")

    def run(self) -> dict[str, Any]:
        return {"success": True}
