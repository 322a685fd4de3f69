"""The conformance kit holds every answer of a tool to the result type it declares."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.distributions import write_distribution

from janito_core.testing import check

SHAPES = '''
from __future__ import annotations

from typing import TypedDict

from janito_core import failure, tool


class Counted(TypedDict):
    """What Count answers.

    Attributes:
        text: The text, as given.
        words: How many words it has.
    """

    text: str
    words: int


@tool()
def count(text: str) -> Counted:
    """Count the words of a text; an empty text is refused.

    Args:
        text: The text.
    """
    if not text.strip():
        return failure("the text is empty", "invalid_arguments", text=text)
    return {"success": True, "text": text, "words": len(text.split())}


@tool()
def count_loosely(text: str) -> Counted:
    """Count the words of a text, forgetting to say which text now and then.

    Args:
        text: The text.
    """
    if len(text) % 2:
        return {"success": True, "words": len(text.split())}
    return {"success": True, "text": text, "words": len(text.split()), "extra": 1}
'''


@pytest.fixture
def shapes(tmp_path: Path) -> Iterator[str]:
    site = tmp_path / "site"
    write_distribution(site, "janito-shapes", toolsets={"shapes": "janito_shapes"},
                       files={"janito_shapes/__init__.py": "", "janito_shapes/shapes.py": SHAPES})
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield "shapes"
    finally:
        sys.path.remove(str(site))
        for name in ("janito_shapes.shapes", "janito_shapes"):
            sys.modules.pop(name, None)


def test_results_that_break_their_declared_type_are_flagged(shapes: str) -> None:
    report = check(shapes, max_examples=10, seed=3)
    assert report.checks_of("Count") == set(), str(report)  # failures match janito's shape
    assert report.checks_of("CountLoosely") == {"result_schema"}, str(report)
    finding = report.findings_of("CountLoosely")[0]
    assert finding.problem.startswith("a successful result does not match the declared result type")
    assert "'text' is a required property" in finding.problem or "extra" in finding.problem
    assert finding.input is not None
