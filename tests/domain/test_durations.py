"""human_duration (kubectl AGE), Go ParseDuration and pause DurationSeconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.domain.durations import age, human_duration, parse_go_duration, pause_seconds


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=-2), "<invalid>"),
        (timedelta(seconds=-1.5), "0s"),
        (timedelta(seconds=-1), "0s"),
        (timedelta(0), "0s"),
        (timedelta(seconds=119), "119s"),
        (timedelta(seconds=120), "2m"),
        (timedelta(seconds=121), "2m1s"),
        (timedelta(minutes=9, seconds=59), "9m59s"),
        (timedelta(minutes=10), "10m"),
        (timedelta(minutes=179), "179m"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=3, minutes=1), "3h1m"),
        (timedelta(hours=3, minutes=59, seconds=59), "3h59m"),
        (timedelta(hours=7, minutes=59), "7h59m"),
        (timedelta(hours=8), "8h"),
        (timedelta(hours=47), "47h"),
        (timedelta(hours=48), "2d"),
        (timedelta(days=7), "7d"),
        (timedelta(days=7, hours=23), "7d23h"),
        (timedelta(days=8), "8d"),
        (timedelta(days=729), "729d"),
        (timedelta(days=730), "2y"),
        (timedelta(days=731), "2y1d"),
        (timedelta(days=365 * 8), "8y"),
    ],
)
def test_it_prints_durations_like_kubernetes(delta: timedelta, text: str) -> None:
    assert human_duration(delta) == text


def test_a_missing_timestamp_ages_like_go_zero_time() -> None:
    assert age(None, datetime(2026, 1, 1, tzinfo=UTC)) == "292y"


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0", 0),
        ("10s", 10_000_000_000),
        ("1h30m", 5_400_000_000_000),
        ("1.5h", 5_400_000_000_000),
        ("-2m", -120_000_000_000),
        ("300ms", 300_000_000),
        ("1µs", 1_000),
        (".5s", 500_000_000),
        ("", None),
        ("10", None),
        ("1d", None),
        ("s", None),
        ("1 s", None),
    ],
)
def test_it_parses_go_durations(text: str, ns: int | None) -> None:
    assert parse_go_duration(text) == ns


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [(None, None), (30, 30), ("30", 30), ("1m", 60), ("1h", 3600), ("1.5s", 1), ("forever", -1), ("1d", -1)],
)
def test_pause_duration_seconds_follow_upstream(duration: object, seconds: int | None) -> None:
    assert pause_seconds(duration) == seconds
