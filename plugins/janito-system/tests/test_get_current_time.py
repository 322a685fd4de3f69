"""GetCurrentTime through dispatch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from janito_core.testing import ToolsetTester


def _has_zone(name: str) -> bool:
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(name)
    except Exception:
        return False
    return True


needs_tzdata = pytest.mark.skipif(not _has_zone("Asia/Kolkata"), reason="no time zone database")


@pytest.fixture
def system(janito: ToolsetTester) -> ToolsetTester:
    janito.load("system", privileges="")
    return janito


def test_loads_without_any_privilege(system: ToolsetTester) -> None:
    assert system.registry is not None
    assert "GetCurrentTime" in system.registry.names()
    assert system.registry.get_tool_permissions("GetCurrentTime") == ""


def test_local_time_by_default(system: ToolsetTester) -> None:
    result = system.call("GetCurrentTime")
    assert result["success"] is True
    moment = datetime.fromisoformat(result["iso_time"])
    assert moment.tzinfo is not None
    assert abs(moment - datetime.now(timezone.utc)) < timedelta(minutes=5)
    assert result["date"] == moment.strftime("%Y-%m-%d")
    assert result["weekday"] == moment.strftime("%A")
    assert result["utc"] is False and result["timezone"] is None and result["format"] is None
    assert isinstance(result["timestamp"], float)


def test_utc(system: ToolsetTester) -> None:
    result = system.call("GetCurrentTime", utc=True)
    assert result["iso_time"].endswith("+00:00")
    assert result["utc_offset"] == "UTC"
    assert result["timezone_name"] == "UTC"


@needs_tzdata
def test_named_time_zone(system: ToolsetTester) -> None:
    result = system.call("GetCurrentTime", timezone="Asia/Kolkata")
    assert result["success"] is True
    assert result["iso_time"].endswith("+05:30")
    assert result["utc_offset"] == "UTC+05:30"
    assert result["timezone_name"] == "Asia/Kolkata"
    utc = datetime.fromisoformat(result["utc_time"])
    assert datetime.fromisoformat(result["iso_time"]) == utc


@pytest.mark.parametrize("name", ["Mars/Olympus_Mons", "../../etc/passwd", "/etc/localtime",
                                  "Europe/Lisbon\x00"])
def test_unknown_time_zone(system: ToolsetTester, name: str) -> None:
    result = system.call("GetCurrentTime", timezone=name)
    assert result["success"] is False
    assert result["error_type"] == "invalid_timezone"
    assert result["timezone"] == name


@pytest.mark.parametrize("name", ["", "x" * 500])
def test_a_time_zone_name_of_no_possible_length_is_refused_by_dispatch(system: ToolsetTester,
                                                                       name: str) -> None:
    result = system.call("GetCurrentTime", timezone=name)
    assert result["error_type"] == "invalid_arguments"
    assert result["details"][0]["field"] == "timezone"


def test_format(system: ToolsetTester) -> None:
    result = system.call("GetCurrentTime", utc=True, format="%Y|%j|%%")
    year, day, percent = result["formatted"].split("|")
    assert year == result["date"][:4]
    assert percent == "%"
    assert 1 <= int(day) <= 366


@pytest.mark.parametrize("pattern", ["", "bad\x00"])
def test_bad_format(system: ToolsetTester, pattern: str) -> None:
    result = system.call("GetCurrentTime", format=pattern)
    assert result["success"] is False
    assert result["error_type"] == "invalid_arguments"


def test_wrong_types_are_refused(system: ToolsetTester) -> None:
    assert system.call("GetCurrentTime", utc="sometimes")["error_type"] == "invalid_arguments"
    assert system.call("GetCurrentTime", timezone=["UTC"])["error_type"] == "invalid_arguments"


@needs_tzdata
def test_harness_uses_the_local_zone() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "janito_system.get_current_time", "--json"],
        env={**os.environ, "TZ": "Asia/Kolkata"}, capture_output=True, text=True, timeout=60,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["utc_offset"] == "UTC+05:30"
    assert result["timezone_name"] == "IST"


def test_janito_4_50_call(system: ToolsetTester) -> None:
    """GetCurrentTime(utc=...) as janito 4.50 declares it: the primary time follows utc,
    and the local and the UTC times are both given either way."""
    for utc in (False, True):
        result = system.call("GetCurrentTime", utc=utc)
        assert result["success"] is True
        local = datetime.fromisoformat(result["local_time"])
        universal = datetime.fromisoformat(result["utc_time"])
        assert abs(local - universal) < timedelta(seconds=5)
        assert result["iso_time"] == (result["utc_time"] if utc else result["local_time"])
        assert universal.utcoffset() == timedelta(0)
