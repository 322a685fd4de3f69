"""Testing helpers for toolset authors; the pytest plugin lives in ``plugin``."""

from __future__ import annotations

from .conformance import ConformanceError, Finding, Report, check, check_toolset
from .races import FolderSwapper
from .tester import ToolsetTester

__all__ = ["ConformanceError", "Finding", "FolderSwapper", "Report", "ToolsetTester", "check",
           "check_toolset"]
