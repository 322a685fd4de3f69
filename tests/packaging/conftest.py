"""Fixtures of the packaging tests: every distribution built once per test session."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _dists import Built, Dist, build, distributions, uv

DISTS = distributions()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "dist" in metafunc.fixturenames:
        metafunc.parametrize("dist", DISTS, ids=[d.name for d in DISTS])
    if "plugin" in metafunc.fixturenames:
        plugins = [d for d in DISTS if not d.is_core]
        metafunc.parametrize("plugin", plugins, ids=[d.name for d in plugins])


@pytest.fixture(scope="session")
def built_all(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    """Every distribution's sdist and wheel (the wheel built from the sdist)."""
    if not uv():
        pytest.importorskip("build", reason="neither uv nor the build package is available")
    out = tmp_path_factory.mktemp("dist")
    return {d.name: build(d, out / d.name) for d in DISTS}


@pytest.fixture
def built(built_all: dict[str, Built], dist: Dist) -> Iterator[Built]:
    result = built_all[dist.name]
    if result.error:
        pytest.fail(f"building {dist.name} failed: {result.error}")
    yield result


@pytest.fixture(scope="session")
def wheels(built_all: dict[str, Built]) -> dict[str, Path]:
    broken = {n: b.error for n, b in built_all.items() if b.error or b.wheel is None}
    if broken:
        pytest.fail(f"some distributions did not build: {broken}")
    return {n: b.wheel for n, b in built_all.items() if b.wheel is not None}
