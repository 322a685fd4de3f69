"""Testing helpers for toolset authors; the pytest plugin lives in ``plugin``."""

from __future__ import annotations

from .tester import ToolsetTester

__all__ = ["ToolsetTester"]
