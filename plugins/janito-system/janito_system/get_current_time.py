"""GetCurrentTime: the current date and time, locally, in UTC or in a named time zone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from janito_core import BaseTool, Failure, failure, tool
from janito_core.constraints import Len, MinLen, Pattern

from ._common import NotRequired, TypedDict
from ._errors import guarded
from ._options import NO_NUL

if TYPE_CHECKING:
    from datetime import datetime


def _offset_text(moment: datetime) -> str:
    offset = moment.utcoffset()
    if offset is None or not offset:
        return "UTC"
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    hours, minutes = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{minutes:02d}"


class CurrentTime(TypedDict):
    """What GetCurrentTime answers.

    Attributes:
        utc: Whether UTC was asked for.
        timezone: The time zone asked for.
        format: The strftime pattern asked for.
        iso_time: The time in the zone answered, ISO 8601.
        local_time: The machine's local time, ISO 8601.
        utc_time: The time in UTC, ISO 8601.
        date: YYYY-MM-DD.
        time: HH:MM:SS.
        weekday: The day's name.
        timezone_name: The zone's name.
        utc_offset: +HH:MM.
        timestamp: Seconds since 1970-01-01 UTC.
        formatted: The time written with format.
    """

    success: Literal[True]
    utc: bool
    timezone: str | None
    format: str | None
    iso_time: str
    local_time: str
    utc_time: str
    date: str
    time: str
    weekday: str
    timezone_name: str
    utc_offset: str
    timestamp: float
    formatted: NotRequired[str]


@tool(permissions="")
class GetCurrentTime(BaseTool):
    """Get the current date and time (ISO 8601), locally, in UTC or in a named time zone."""

    @guarded()
    def run(
        self,
        utc: bool = False,
        timezone: Annotated[str, Len(1, 100)] | None = None,
        format: Annotated[str, MinLen(1), Pattern(NO_NUL)] | None = None,
    ) -> CurrentTime | Failure:
        """Return the current date and time.

        Args:
            utc: Give the time in UTC instead of the local time zone (ignored when timezone
                is set); local_time and utc_time are always both in the result.
            timezone: An IANA time zone name such as "Europe/Lisbon" or "America/New_York";
                the time is given in that zone.
            format: A strftime pattern such as "%A %d %B %Y, %H:%M" for an extra
                `formatted` field.
        """
        from datetime import datetime
        from datetime import timezone as dt_timezone

        echo: dict[str, Any] = {"utc": utc, "timezone": timezone, "format": format}
        now_utc = datetime.now(dt_timezone.utc)
        if timezone is not None:
            zone = _zone(timezone)
            if isinstance(zone, str):
                return failure(zone, "invalid_timezone", **echo)
            moment = now_utc.astimezone(zone)
            zone_name = timezone
        elif utc:
            moment = now_utc
            zone_name = "UTC"
        else:
            moment = now_utc.astimezone()
            zone_name = moment.tzname() or _offset_text(moment)
        result: dict[str, Any] = {
            "success": True,
            **echo,
            "iso_time": moment.isoformat(),
            "local_time": now_utc.astimezone().isoformat(),
            "utc_time": now_utc.isoformat(),
            "date": moment.strftime("%Y-%m-%d"),
            "time": moment.strftime("%H:%M:%S"),
            "weekday": moment.strftime("%A"),
            "timezone_name": zone_name,
            "utc_offset": _offset_text(moment),
            "timestamp": round(now_utc.timestamp(), 3),
        }
        if format is not None:
            try:
                result["formatted"] = moment.strftime(format)
            except (ValueError, UnicodeError) as exc:
                return failure(f"format {format!r} is not a valid strftime pattern: {exc}",
                               "invalid_arguments", **echo)
        self.report_result(f"current time {result['iso_time']}")
        return result


def _zone(name: str) -> Any:
    """The ZoneInfo called ``name``, or a sentence saying why there is none."""
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    except ImportError:  # pragma: no cover - zoneinfo is stdlib from 3.9
        return "time zones are not supported by this Python"
    try:
        return ZoneInfo(name)
    except ZoneInfoNotFoundError:
        return (f"unknown time zone {name!r}; use an IANA name such as 'Europe/Paris' or "
                "'America/New_York'")
    except (ValueError, OSError, UnicodeError) as exc:
        return f"{name!r} is not a valid time zone name ({exc})"


def main(argv: list[str] | None = None) -> int:
    """Run GetCurrentTime from the command line (see janito_core.harness)."""
    from janito_core.harness import run_main

    return run_main(GetCurrentTime, argv)


if __name__ == "__main__":
    raise SystemExit(main())
