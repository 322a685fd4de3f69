from __future__ import annotations

from pydantic import BaseModel, Field

from janito_core import BaseTool, tool


class Day(BaseModel):
    date: str
    high_c: float = Field(description="The highest temperature, in degrees Celsius.")


class Forecast(BaseModel):
    city: str
    days: list[Day]


@tool(permissions="r")
class GetForecast(BaseTool):
    """Tell the weather of the next days in a city."""

    def run(self, city: str) -> Forecast:
        """Tell the weather to come.

        Args:
            city: The city to tell the weather of.
        """
        return Forecast(city=city, days=[Day(date="2026-12-07", high_c=15.5),
                                         Day(date="2026-12-08", high_c=14.0)])
