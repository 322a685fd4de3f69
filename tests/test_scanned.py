"""The last scan of the entry points is used while nothing it was made from changed, and
never after: a distribution installed, removed or upgraded, an ``entry_points.txt``
edited in place, another Python, a finder of distributions of its own."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.distributions import write_distribution

from janito_core import _manifest, _scanned, discovery


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder of distributions first on sys.path, its times taken as settled at once.

    The rest of sys.path is the environment's and the interpreter's own folders only: a
    scan is kept while every folder of sys.path keeps its times, and the checkout's
    folders there (the tests') change whenever a test beside this one, in another
    process, first writes a ``__pycache__`` into one of them."""
    folder = tmp_path / "site"
    write_distribution(folder, "janito-alpha", "1.0", toolsets={"alpha": "alpha_pkg"},
                       files={"alpha_pkg/__init__.py": ""})
    own = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
    # a new list, put back as it was afterwards (syspath_prepend would write its copy of
    # this one back into the old list)
    monkeypatch.setattr(sys, "path", [str(folder), *(
        entry for entry in sys.path if isinstance(entry, str) and entry.startswith(own))])
    monkeypatch.setattr(_manifest, "SETTLED_SECONDS", -3600.0)
    importlib.invalidate_caches()
    yield folder
    importlib.invalidate_caches()


def scanned_fresh(monkeypatch: pytest.MonkeyPatch) -> discovery.Discovered:
    """A scan that must come from the kept one: scanning the distributions fails."""
    with monkeypatch.context() as patch:
        patch.setattr(discovery, "_scan", _no_scan)
        return discovery.scan()


def _no_scan(distributions: Any) -> discovery.Discovered:
    raise AssertionError("the distributions were scanned")


def kept_files() -> list[str]:
    where = _manifest.folder(_scanned.FOLDER)
    return sorted(os.listdir(where)) if where and os.path.isdir(where) else []


def test_a_kept_scan_answers_as_the_scan_did(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = discovery.scan()
    assert first.toolsets["alpha"].distribution == "janito-alpha"
    assert len(kept_files()) == 1
    assert scanned_fresh(monkeypatch) == first


def test_a_distribution_installed_since_is_found(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    discovery.scan()
    write_distribution(site, "janito-beta", "2.0", toolsets={"beta": "beta_pkg"},
                       files={"beta_pkg/__init__.py": ""})
    importlib.invalidate_caches()
    assert {"alpha", "beta"} <= set(discovery.scan().toolsets)
    assert {"alpha", "beta"} <= set(scanned_fresh(monkeypatch).toolsets)


def test_a_distribution_removed_since_is_gone(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    discovery.scan()
    shutil.rmtree(site / "janito_alpha-1.0.dist-info")
    importlib.invalidate_caches()
    assert "alpha" not in discovery.scan().toolsets
    assert "alpha" not in scanned_fresh(monkeypatch).toolsets


def test_an_upgrade_is_seen(site: Path) -> None:
    discovery.scan()
    shutil.rmtree(site / "janito_alpha-1.0.dist-info")
    write_distribution(site, "janito-alpha", "1.1", toolsets={"alpha": "alpha_pkg"})
    importlib.invalidate_caches()
    assert discovery.scan().toolsets["alpha"].version == "1.1"


def test_entry_points_edited_in_place_are_read_again(site: Path) -> None:
    discovery.scan()
    points = site / "janito_alpha-1.0.dist-info" / "entry_points.txt"
    before = os.stat(site)
    points.write_text("[janito.toolsets]\nrenamed = alpha_pkg\n", encoding="utf-8")
    after = os.stat(site)  # written in place: the folders' times do not change
    assert (before.st_mtime_ns, before.st_ctime_ns) == (after.st_mtime_ns, after.st_ctime_ns)
    found = discovery.scan().toolsets
    assert "renamed" in found and "alpha" not in found


def test_a_scan_is_not_kept_while_a_time_is_recent(site: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_manifest, "SETTLED_SECONDS", 3600.0)
    discovery.scan()
    assert kept_files() == []


def test_a_finder_of_its_own_means_scanning_every_time(site: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    class Finder:
        def find_spec(self, *args: Any) -> None:
            return None

        def find_distributions(self, *args: Any) -> list[Any]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert _scanned.key(discovery.__file__) is None
    discovery.scan()
    assert kept_files() == []


@pytest.mark.parametrize("spoil", ["others may write it", "not JSON", "a wrong shape",
                                   "another key"])
def test_a_kept_scan_that_cannot_be_trusted_is_not_used(site: Path, spoil: str) -> None:
    discovery.scan()
    [name] = kept_files()
    where = Path(_manifest.folder(_scanned.FOLDER) or "", name)
    if spoil == "others may write it":
        where.chmod(0o666)
    elif spoil == "not JSON":
        where.write_text("{", encoding="utf-8")
    elif spoil == "a wrong shape":
        where.write_text(where.read_text(encoding="utf-8").replace('"janito-alpha"', "7"),
                         encoding="utf-8")
    else:
        where.write_text(where.read_text(encoding="utf-8").replace(sys.version, "2.7"),
                         encoding="utf-8")
    read = []
    original = discovery._scan

    def counted(distributions: Any) -> discovery.Discovered:
        read.append(True)
        return original(distributions)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(discovery, "_scan", counted)
        assert discovery.scan().toolsets["alpha"].distribution == "janito-alpha"
    assert read == [True]
