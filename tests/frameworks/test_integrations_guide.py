"""docs/integrations.md runs: each framework's example, after the tools they share."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
SECTION = re.compile(r"^## (.+)$", re.M)
PYTHON = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def sections() -> dict[str, list[str]]:
    """The Python blocks of each section of the guide, by the section's title."""
    text = GUIDE.read_text(encoding="utf-8")
    parts = SECTION.split(text)
    return {title: PYTHON.findall(body) for title, body in zip(parts[1::2], parts[2::2], strict=True)}


# what each example prints, in part
PRINTED = {
    "pydantic-ai": ["RunCheck({'check':", "mode ask"],
    "OpenAI Agents SDK": ["The lint check ran."],
    "LangChain": ["RunCheck(", "The lint check ran."],
    "llm": ["RunCheck(", '\\"ran\\": \\"lint\\"'],
}


@pytest.mark.parametrize("framework", sorted(PRINTED))
def test_the_example_runs(framework: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                          ) -> None:
    blocks = sections()
    [shared] = blocks["The tools of the examples"]
    assert blocks[framework], f"no example for {framework}"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for source in [shared, *blocks[framework]]:
            exec(compile(source, f"{GUIDE.name}: {framework}", "exec"), namespace)
    for expected in PRINTED[framework]:
        assert expected in printed.getvalue(), printed.getvalue()
