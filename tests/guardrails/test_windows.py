"""Freeze windows on the clocks of their time zone: weekly, one-off, holidays, and the DST edges."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from dashboard.guardrails.windows import (
    Holidays,
    OneOff,
    Weekly,
    active_span,
    parse_weekly,
)

BERLIN = ZoneInfo("Europe/Berlin")
WEEKEND = parse_weekly("Fri 16:00 - Mon 08:00")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_weekly_window_is_on_from_friday_afternoon_to_monday_morning_berlin_time() -> None:
    # 2026-12-04 is a Friday; Berlin is UTC+1 in winter.
    assert WEEKEND.span_at(utc("2026-12-04T14:59"), BERLIN) is None
    span = WEEKEND.span_at(utc("2026-12-04T15:00"), BERLIN)
    assert span == (utc("2026-12-04T15:00"), utc("2026-12-07T07:00"))
    assert WEEKEND.span_at(utc("2026-12-06T23:00"), BERLIN) == span
    assert WEEKEND.span_at(utc("2026-12-07T07:00"), BERLIN) is None  # the end is not inside


def test_a_window_over_the_spring_change_ends_at_eight_on_the_wall_clock_after_63_hours() -> None:
    # Clocks go forward on Sunday 2026-03-29 at 02:00 in Berlin: Fri 16:00 CET → Mon 08:00 CEST.
    begins, ends = WEEKEND.span_at(utc("2026-03-28T12:00"), BERLIN) or (None, None)
    assert begins == utc("2026-03-27T15:00") and ends == utc("2026-03-30T06:00")
    assert ends.astimezone(BERLIN).time() == time(8, 0)
    assert (ends - begins).total_seconds() == 63 * 3600


def test_a_window_over_the_autumn_change_lasts_65_hours() -> None:
    # Clocks go back on Sunday 2026-10-25 at 03:00 in Berlin.
    begins, ends = WEEKEND.span_at(utc("2026-10-24T12:00"), BERLIN) or (None, None)
    assert begins == utc("2026-10-23T14:00") and ends == utc("2026-10-26T07:00")
    assert (ends - begins).total_seconds() == 65 * 3600


def test_a_time_skipped_in_spring_is_read_with_the_offset_before_the_change() -> None:
    nightly = Weekly(6, time(2, 30), 6, time(4, 0))  # Sunday 02:30 does not exist on 2026-03-29
    assert nightly.span_at(utc("2026-03-29T01:20"), BERLIN) is None
    # 02:30 read as CET is 01:30 UTC (03:30 CEST); the window runs to 04:00 CEST = 02:00 UTC.
    assert nightly.span_at(utc("2026-03-29T01:30"), BERLIN) == (
        utc("2026-03-29T01:30"),
        utc("2026-03-29T02:00"),
    )


def test_an_hour_repeated_in_autumn_is_its_first_occurrence() -> None:
    nightly = Weekly(6, time(2, 30), 6, time(5, 0))  # Sunday 2026-10-25: 02:30 happens twice
    # The first 02:30 is CEST (00:30 UTC).
    assert nightly.span_at(utc("2026-10-25T00:30"), BERLIN) is not None
    assert nightly.span_at(utc("2026-10-25T00:29"), BERLIN) is None


def test_a_one_off_window_is_wall_clock_time_in_its_zone() -> None:
    window = OneOff(datetime(2026, 12, 24, 0, 0), datetime(2027, 1, 4, 8, 0))
    new_york = ZoneInfo("America/New_York")
    assert window.span_at(utc("2026-12-24T04:59"), new_york) is None
    assert window.span_at(utc("2026-12-24T05:00"), new_york) == (
        utc("2026-12-24T05:00"),
        utc("2027-01-04T13:00"),
    )


def test_holidays_are_whole_local_days() -> None:
    christmas = Holidays(frozenset({date(2026, 12, 25)}))
    assert christmas.span_at(utc("2026-12-24T22:59"), BERLIN) is None
    assert christmas.span_at(utc("2026-12-24T23:00"), BERLIN) == (
        utc("2026-12-24T23:00"),
        utc("2026-12-25T23:00"),
    )


def test_a_weekend_running_into_a_holiday_monday_ends_when_the_holiday_ends() -> None:
    # Monday 2026-12-28 declared a holiday: the freeze runs from Friday to Tuesday 00:00.
    holiday = Holidays(frozenset({date(2026, 12, 28)}))
    span = active_span([(WEEKEND, BERLIN), (holiday, BERLIN)], utc("2026-12-26T10:00"))
    assert span == (utc("2026-12-25T15:00"), utc("2026-12-28T23:00"))


@pytest.mark.parametrize("text", ["Fri 16:00", "Fry 16:00 - Mon 08:00", "Fri 25:00 - Mon 08:00", "Fri - Mon"])
def test_a_malformed_weekly_window_is_refused_with_what_is_wrong(text: str) -> None:
    with pytest.raises(ValueError, match="weekly="):
        parse_weekly(text)
