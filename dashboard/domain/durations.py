"""Durations the way Go and Kubernetes print and parse them.

- :func:`human_duration` is apimachinery's ``duration.HumanDuration`` (the AGE column of kubectl).
- :func:`parse_go_duration` is Go's ``time.ParseDuration`` ("1h30m", "10s", "1.5h").
- :func:`pause_seconds` is Argo Rollouts' ``RolloutPause.DurationSeconds``.

Go durations are signed int64 nanoseconds, so the arithmetic here works on integer nanoseconds and
truncates toward zero the way Go's integer division does. Non-goals: formatting for humans beyond
what kubectl prints.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

NS_PER_SECOND = 1_000_000_000
_MAX_NS = 2**63 - 1
_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": NS_PER_SECOND,
    "m": 60 * NS_PER_SECOND,
    "h": 3600 * NS_PER_SECOND,
}
_COMPONENT = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def trunc_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, like Go's ``/`` on integers."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def delta_ns(delta: timedelta) -> int:
    """A timedelta as Go nanoseconds, saturating like ``time.Time.Sub``."""
    ns = (delta.days * 86_400 + delta.seconds) * NS_PER_SECOND + delta.microseconds * 1_000
    return max(-_MAX_NS - 1, min(_MAX_NS, ns))


def human_duration(delta: timedelta | int) -> str:
    """apimachinery ``HumanDuration``; an int argument is nanoseconds."""
    ns = delta if isinstance(delta, int) else delta_ns(delta)
    seconds = trunc_div(ns, NS_PER_SECOND)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = ns // (60 * NS_PER_SECOND)
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = ns // (3600 * NS_PER_SECOND)
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def age(created: datetime | None, now: datetime) -> str:
    """kubectl's AGE. A missing timestamp is Go's zero time, so the duration saturates ("292y")."""
    if created is None:
        return human_duration(_MAX_NS)
    return human_duration(now - created)


def parse_go_duration(text: str) -> int | None:
    """Go ``time.ParseDuration`` in nanoseconds, or None where Go returns an error."""
    if not isinstance(text, str) or not text:
        return None
    rest = text
    negative = False
    if rest[0] in "+-":
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        return None
    total = 0
    while rest:
        match = _COMPONENT.match(rest)
        if not match:
            return None
        number, unit = match.groups()
        if number in ("", "."):
            return None
        whole, _, frac = number.partition(".")
        scale = _UNITS_NS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(frac) * scale // 10 ** len(frac)
        total += value
        if total > _MAX_NS + (1 if negative else 0):
            return None
        rest = rest[match.end() :]
    return -total if negative else total


def pause_seconds(duration: Any) -> int | None:
    """``RolloutPause.DurationSeconds``: None for no duration, -1 when it cannot be parsed."""
    if duration is None:
        return None
    if isinstance(duration, bool):
        return -1
    if isinstance(duration, int):
        return duration
    if isinstance(duration, float):
        return int(duration) if duration.is_integer() else -1
    if not isinstance(duration, str):
        return -1
    if re.fullmatch(r"[+-]?[0-9]+", duration):
        number = int(duration)
        return number if -(2**31) <= number < 2**31 else -1
    ns = parse_go_duration(duration)
    if ns is None:
        return -1
    return trunc_div(ns, NS_PER_SECOND)
