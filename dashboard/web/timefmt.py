"""Small, pure time helpers for pages: parse Kubernetes timestamps and print short human ages."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_DURATION = re.compile(r"(\d+)(h|m|s)")


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 timestamp (``Z`` or offset) as an aware datetime; None when missing or malformed."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def parse_duration(value: object) -> timedelta | None:
    """An Argo Rollouts pause duration: an integer (seconds) or ``"1h30m"`` / ``"5m"`` / ``"30s"``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return timedelta(seconds=value)
    if not isinstance(value, str) or not value:
        return None
    if value.isdigit():
        return timedelta(seconds=int(value))
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    scale = {"h": 3600, "m": 60, "s": 1}
    return timedelta(seconds=sum(int(n) * scale[u] for n, u in parts))


def short_age(seconds: float | None) -> str:
    """A compact age for dense tables: ``"45 s"``, ``"14 m"``, ``"3 h 12 m"``, ``"2 d"``; ``"—"`` unknown."""
    if seconds is None:
        return "—"
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} m"
    if s < 86400:
        hours, minutes = divmod(s // 60, 60)
        return f"{hours} h {minutes} m" if minutes and hours < 10 else f"{hours} h"
    return f"{s // 86400} d"


def age_since(value: object, now: datetime) -> str:
    start = parse_time(value)
    return short_age((now - start).total_seconds() if start else None)


def clock(value: object) -> str:
    """``HH:MM:SS`` (UTC) of a timestamp, or ``""``."""
    moment = parse_time(value)
    return moment.strftime("%H:%M:%S") if moment else ""
