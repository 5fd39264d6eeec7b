"""Clocks: wall timestamps, compressed durations, and the manual test clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubesim.clock import Clock, ManualClock, parse_duration, parse_rfc3339, rfc3339


def test_durations_are_divided_by_speed() -> None:
    assert Clock(30).wall(300).total_seconds() == 10


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="speed must be a positive number"):
        Clock(0)


def test_the_manual_clock_only_moves_when_advanced() -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    first = clock.now()
    assert clock.now() == first
    clock.advance(90)
    assert rfc3339(clock.now()) == "2026-01-01T00:01:30Z"
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)


def test_the_real_clock_gives_utc_now() -> None:
    assert abs((Clock().now() - datetime.now(UTC)).total_seconds()) < 1


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (30, 30.0),
        ("45", 45.0),
        ("1m30s", 90.0),
        ("1h", 3600.0),
        ("500ms", 0.5),
        ("bogus", None),
        ("10", 10.0),
        ("5x", None),
        (True, None),
    ],
)
def test_argo_duration_strings_parse_like_duration_seconds(value: object, seconds: float | None) -> None:
    assert parse_duration(value) == seconds


def test_rfc3339_round_trips() -> None:
    when = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)
    assert parse_rfc3339(rfc3339(when)) == when
    assert parse_rfc3339("not a time") is None
