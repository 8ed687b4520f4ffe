"""A weather service as a stdio MCP server: forecasts, current conditions, climate averages.

Run it as a script: ``python bench/teams/servers/travel_weather.py``.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import fake_backend as fb
from traveldata import City, city

server = fb.FastMCP("travel-weather")
SKIES = (
    "sunny",
    "partly cloudy",
    "cloudy",
    "light rain",
    "heavy rain",
    "thunderstorms",
    "snow",
    "fog",
)


def _mean(place: City, day_of_year: float) -> float:
    """The place's mean temperature on a day of the year (coldest mid-January, warmest mid-July)."""
    phase = math.cos(2 * math.pi * (day_of_year - 15) / 365)
    return (place.jan_c + place.jul_c) / 2 + (place.jan_c - place.jul_c) / 2 * phase


def _day(place: City, day: dt.date) -> dict[str, Any]:
    r = fb.rng("weather", place.name, day)
    mean = _mean(place, day.timetuple().tm_yday)
    rain = r.random() < place.rainy_days / 30
    sky = r.choice(SKIES[3:6] if rain else SKIES[:3])
    if rain and mean < 1:
        sky = "snow"
    return {
        "city": place.name,
        "country": place.country,
        "date": day.isoformat(),
        "sky": sky,
        "high_c": round(mean + r.uniform(2, 6), 1),
        "low_c": round(mean - r.uniform(2, 6), 1),
        "chance_of_rain_pct": r.randint(60, 95) if rain else r.randint(0, 30),
        "wind_kmh": r.randint(3, 45),
    }


@server.tool(annotations=fb.READ_ONLY)
def weather_forecast(city_name: str, date: str) -> dict[str, Any]:
    """The forecast for a city on a date (YYYY-MM-DD): sky, high and low in °C, chance of rain,
    wind."""
    return _day(city(city_name, "city_name"), fb.need_date("date", date))


@server.tool(annotations=fb.READ_ONLY)
def current_weather(city_name: str) -> dict[str, Any]:
    """The weather in a city right now: sky, temperature in °C, humidity and wind."""
    place = city(city_name, "city_name")
    today = dt.date.today()
    day = _day(place, today)
    r = fb.rng("now", place.name, today)
    return {
        "city": place.name,
        "sky": day["sky"],
        "temperature_c": round(_mean(place, today.timetuple().tm_yday) + r.uniform(-3, 3), 1),
        "humidity_pct": r.randint(35, 95),
        "wind_kmh": day["wind_kmh"],
    }


@server.tool(annotations=fb.READ_ONLY)
def climate_averages(city_name: str, month: int) -> dict[str, Any]:
    """What a city's weather is usually like in a month (1-12): mean high and low, rainy days."""
    place = city(city_name, "city_name")
    number = fb.need_int("month", month, 1, 12)
    mean = _mean(place, (number - 1) * 30.4 + 15)
    return {
        "city": place.name,
        "month": dt.date(2000, number, 1).strftime("%B"),
        "mean_high_c": round(mean + 4, 1),
        "mean_low_c": round(mean - 4, 1),
        "rainy_days": place.rainy_days,
    }


if __name__ == "__main__":
    server.run()
