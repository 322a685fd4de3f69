"""Testing helpers for toolset authors; the pytest plugin lives in ``plugin``."""

from __future__ import annotations

from .conformance import ConformanceError, Finding, Report, check, check_toolset
from .tester import ToolsetTester

__all__ = ["ConformanceError", "Finding", "Report", "ToolsetTester", "check", "check_toolset"]
