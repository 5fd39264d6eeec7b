"""How fresh each cluster's data is: the one answer pages, ``/api/live-status`` and ``/readyz`` give.

Each watcher writes a report of its cluster to the bus every few seconds (``Watcher.cluster_report``):
when it wrote it, and per watch when it last saw the API server alive (a list, an event, a bookmark, a
watch the server ended normally) and whether its last attempt failed, with the error. A cluster is
**stale** when the newest report is older than ``stale_after`` (the watcher is gone or cannot write) or
one of its watches has seen nothing for that long; it is **failing** when a watch has been failing for
more than ``FAILING_GRACE`` seconds (a single dropped stream that reconnects at once is not news).

A fresh cluster may still be **loading**: its watcher is listing it (for at most ``stale_after``; then it
is stale), or has listed it and is publishing the rollouts the bus does not hold as they are now (a cold
start, a Redis that lost its data). Until it is done some of the cluster's rollouts are missing from the
pages or out of date, and the pages say so, with how many.

The watcher asks for watch bookmarks, and the watch is reconnected after ``silence_timeout`` (90 s), so
a healthy but quiet cluster is seen at least every ~90 s: the default ``LIVE_STALE_AFTER_SECONDS`` of 120
never flags one.

Non-goals: no I/O (callers read the reports), nothing about the browser's own websocket (``live.js``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

FAILING_GRACE = 10.0  # seconds a watch may fail before the cluster counts as failing


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cluster_freshness(report: Mapping[str, Any], *, now: float, stale_after: float) -> dict[str, Any]:
    """One cluster's freshness from its watcher's report (``now`` in epoch seconds)."""
    reported = _number(report.get("reportedAt"))
    watches = [w for w in report.get("watches") or () if isinstance(w, Mapping)]
    seen = [_number(w.get("lastSeenAt")) for w in watches]
    last_seen = None if not seen or None in seen else min(s for s in seen if s is not None)
    failing = [
        {
            "watch": str(w.get("watch") or "?"),
            "since": _iso(_number(w.get("failingSince"))),
            "error": str(w.get("error") or "")[:300],
        }
        for w in watches
        if (since := _number(w.get("failingSince"))) is not None and now - since > FAILING_GRACE
    ]
    stale, stale_since, reason, loading, loading_since = True, None, "", False, None
    rollouts, behind = _count(report.get("rollouts")), _count(report.get("behind"))
    if reported is None or now - reported > stale_after:
        stale_since, reason = reported, "its watcher has not reported"
    elif not report.get("ready"):
        started = _number(report.get("startedAt"))
        stale = started is None or now - started > stale_after
        loading, loading_since = not stale, started
        stale_since, reason = started, "its watcher has not finished listing"
    elif last_seen is None or now - last_seen > stale_after:
        never = [w for w, s in zip(watches, seen, strict=True) if s is None]
        stale_since = last_seen
        if last_seen is None:
            stale_since = min((_number(w.get("failingSince")) or now for w in never), default=None)
        reason = "nothing seen from its API server"
    else:
        stale = False
        # (A report without ``current`` comes from a watcher that did not say: nothing is claimed.)
        if report.get("current") is False:
            loading = True
            reason = "its watcher is publishing the fleet"
            if rollouts is not None and behind is not None:
                reason += f": {max(0, rollouts - behind):,} of {rollouts:,} rollouts current"
        elif failing:
            reason = "a watch is failing"
    return {
        "cluster": str(report.get("cluster") or ""),
        "stale": stale,
        "loading": loading,
        "loadingSince": _iso(loading_since),
        "rollouts": rollouts,
        "behind": behind if loading else 0,
        "staleSince": _iso(stale_since if stale else None),
        "failing": failing,
        "reason": reason,
        "lastSeenAt": _iso(last_seen),
        "reportedAt": _iso(reported),
    }


def fleet_freshness(
    reports: Mapping[str, Mapping[str, Any]], *, now: float, stale_after: float
) -> list[dict[str, Any]]:
    """Every reporting cluster's freshness, sorted by name."""
    return [
        cluster_freshness({**report, "cluster": name}, now=now, stale_after=stale_after)
        for name, report in sorted(reports.items())
    ]


def stale_after_seconds() -> float:
    from django.conf import settings

    return float(getattr(settings, "LIVE_STALE_AFTER_SECONDS", 120))
