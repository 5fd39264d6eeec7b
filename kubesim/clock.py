"""Time for the simulator: wall-clock timestamps, durations compressed by a speed factor.

Object timestamps are always wall-clock UTC so that a client never sees a time in the future. Durations that
the simulated cluster waits for (a 5 m pause, an analysis interval, a pod's readiness delay, the 30 s lag of a
repository checkout) are *simulated* seconds; ``Clock.wall(sim_seconds)`` turns them into real seconds by
dividing by ``speed``. ``ManualClock`` is the test clock: time only moves when a test advances it, so a
scenario that spans an hour of simulated time runs in milliseconds and deterministically.

Non-goals: no timers or scheduling here (the simulation owns its timer heap); no time zones other than UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """The real clock: ``now()`` is wall time; simulated durations are divided by ``speed``."""

    def __init__(self, speed: float = 1.0) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be a positive number, got {speed!r}")
        self.speed = float(speed)

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wall(self, sim_seconds: float) -> timedelta:
        """How much wall time a simulated duration takes."""
        return timedelta(seconds=sim_seconds / self.speed)

    def sim_elapsed(self, since: datetime) -> float:
        """Simulated seconds elapsed since a wall-clock instant."""
        return (self.now() - since).total_seconds() * self.speed


class ManualClock(Clock):
    """A clock that stands still until ``advance`` is called (speed 1: simulated second = clock second)."""

    def __init__(self, start: datetime | None = None) -> None:
        super().__init__(1.0)
        self._now = start or datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, sim_seconds: float) -> None:
        if sim_seconds < 0:
            raise ValueError("time cannot go backwards")
        self._now += timedelta(seconds=sim_seconds)

    def set(self, when: datetime) -> None:
        if when < self._now:
            raise ValueError("time cannot go backwards")
        self._now = when


def rfc3339(when: datetime) -> str:
    """Kubernetes' metav1.Time encoding: second precision, trailing Z."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, AttributeError, TypeError):
        return None


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float | None:
    """Argo's DurationString: an int (seconds), a numeric string (seconds), or a Go duration ("1m30s").

    Returns None when the value cannot be parsed, like ``DurationSeconds()`` returning -1 upstream.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.lstrip("-").isdigit():
        return float(int(text))
    total, number, i = 0.0, "", 0
    sign = -1.0 if text.startswith("-") else 1.0
    text = text.lstrip("+-")
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = ""
        while i < len(text) and not (text[i].isdigit() or text[i] == "."):
            unit += text[i]
            i += 1
        if not number or unit not in _UNITS:
            return None
        try:
            total += float(number) * _UNITS[unit]
        except ValueError:
            return None
        number = ""
    if number:  # trailing number without a unit is invalid in Go
        return None
    return sign * total
