"""Freeze windows in a time zone: when each one is on, and when a run of them ends (pure, no Django).

Times are wall-clock times in the window's IANA zone (``zoneinfo``), so "Fri 16:00 – Mon 08:00
Europe/Berlin" ends at 08:00 on Monday in Berlin whether or not the clocks changed over the weekend (the
window then lasts 63 or 65 hours). A wall-clock time that does not exist (the hour skipped in spring) is
read with the offset before the change, as ``zoneinfo`` does with ``fold=0``: 02:30 on that day is 03:30
summer time; an ambiguous one (the hour repeated in autumn) is its first occurrence. Every comparison is
made in UTC: Python compares two datetimes of the same zone by wall clock, which is wrong across a change.

Non-goals: which actions a window freezes, or for whom (``dashboard.guardrails.rules``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
CHAIN_LIMIT = 32  # windows chained end to start (a holiday after a weekend …) are followed this far


def wall(day: date, at: time, zone: ZoneInfo) -> datetime:
    """``day`` at ``at`` on the clocks of ``zone``, in UTC."""
    return datetime.combine(day, at, tzinfo=zone).astimezone(UTC)


@dataclass(frozen=True)
class Weekly:
    """Every week from ``start_day start`` to ``end_day end`` (days 0 = Monday); may wrap the week."""

    start_day: int
    start: time
    end_day: int
    end: time

    def span_at(self, now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime] | None:
        local = now.astimezone(zone).date()
        length = (self.end_day - self.start_day) % 7
        if length == 0 and self.end <= self.start:
            length = 7
        for back in range(8):  # the latest start on or before today, then the one before it
            day = local - timedelta(days=back)
            if day.weekday() != self.start_day:
                continue
            begins, ends = wall(day, self.start, zone), wall(day + timedelta(days=length), self.end, zone)
            if begins <= now < ends:
                return begins, ends
        return None


@dataclass(frozen=True)
class OneOff:
    begins: datetime  # naive wall-clock times in the window's zone
    ends: datetime

    def span_at(self, now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime] | None:
        begins = self.begins.replace(tzinfo=zone).astimezone(UTC)
        ends = self.ends.replace(tzinfo=zone).astimezone(UTC)
        return (begins, ends) if begins <= now < ends else None


@dataclass(frozen=True)
class Holidays:
    """Whole days (midnight to midnight on the zone's clocks)."""

    days: frozenset[date]

    def span_at(self, now: datetime, zone: ZoneInfo) -> tuple[datetime, datetime] | None:
        today = now.astimezone(zone).date()
        if today not in self.days:
            return None
        return wall(today, time(0), zone), wall(today + timedelta(days=1), time(0), zone)


Schedule = Weekly | OneOff | Holidays


def active_span(
    schedules: Sequence[tuple[Schedule, ZoneInfo]], now: datetime
) -> tuple[datetime, datetime] | None:
    """(start, end) of the freeze on at ``now`` — its end followed through windows that begin as another
    ends (a weekend running into a holiday) — or None when none is on. ``now`` must be aware."""
    now = now.astimezone(UTC)
    spans = [s for s in (sched.span_at(now, zone) for sched, zone in schedules) if s is not None]
    if not spans:
        return None
    start, end = min(s[0] for s in spans), max(s[1] for s in spans)
    for _ in range(CHAIN_LIMIT):
        later = [s for s in (sched.span_at(end, zone) for sched, zone in schedules) if s is not None]
        if not later:
            break
        end = max(s[1] for s in later)
    return start, end


def parse_weekly(text: str) -> Weekly:
    """``"Fri 16:00 - Mon 08:00"`` (days in English, three letters or more; 24-hour times)."""
    parts = [p.strip() for p in text.replace("–", "-").split("-")]
    if len(parts) != 2:
        raise ValueError(f"weekly={text!r}: write 'Fri 16:00 - Mon 08:00'")
    (start_day, start), (end_day, end) = (_day_time(p, text) for p in parts)
    return Weekly(start_day, start, end_day, end)


def _day_time(part: str, text: str) -> tuple[int, time]:
    words = part.split()
    if len(words) != 2:
        raise ValueError(f"weekly={text!r}: {part!r} is not a day and a time such as 'Fri 16:00'")
    day = words[0][:3].lower()
    if day not in DAYS:
        raise ValueError(f"weekly={text!r}: {words[0]!r} is not a day of the week (Mon … Sun)")
    return DAYS.index(day), parse_time(words[1], f"weekly={text!r}")


def parse_time(text: str, where: str) -> time:
    try:
        hours, minutes = text.split(":")
        return time(int(hours), int(minutes))
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a 24-hour time such as 08:00") from None


def parse_local(text: str, where: str) -> datetime:
    """``"2026-12-24 00:00"`` (or with a ``T``), a wall-clock time in the window's zone."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{where}={text!r} is not a date and time such as 2026-12-24 00:00") from None
    if parsed.tzinfo is not None:
        raise ValueError(f"{where}={text!r}: give the wall-clock time; the zone comes from tz=")
    return parsed


def parse_days(text: str) -> frozenset[date]:
    days = set()
    for word in text.replace(",", " ").split():
        try:
            days.add(date.fromisoformat(word))
        except ValueError:
            raise ValueError(f"holidays: {word!r} is not a date such as 2026-12-25") from None
    if not days:
        raise ValueError("holidays= lists no dates")
    return frozenset(days)


def zone_named(name: str) -> ZoneInfo:
    from zoneinfo import ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"tz={name!r} is not an IANA time zone such as Europe/Berlin") from None
