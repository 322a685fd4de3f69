"""The fixture every framework's tests use (framework_setup.py has the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from framework_setup import Setup


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)
