"""``/metrics`` of the web process: its own registry plus the families counted in the database.

Actions by outcome and notifications by status are read from the database at scrape time (see
``metrics``' docstring for why). Every web replica reports the same database totals, so aggregate them
with ``max`` rather than ``sum`` across replicas (the operator guide's alert examples do).

When ``METRICS_TOKEN`` is set, a scrape must send ``Authorization: Bearer <token>``.

Non-goals: no HTML, no per-user data in labels.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector


class DatabaseCollector(Collector):
    """Actions by outcome (the append-only audit) and notifications by status, counted at scrape time."""

    def collect(self) -> Iterator[Any]:
        from dashboard.actions.models import AuditEntry
        from dashboard.notify.models import Notification

        actions = CounterMetricFamily(
            "rollouts_ui_actions",
            "Action attempts by action and outcome (accepted attempts, then one final outcome each).",
            labels=["action", "outcome"],
        )
        notifications = GaugeMetricFamily(
            "rollouts_ui_notifications",
            "Notifications by channel and status (pending ones are waiting to be sent or retried).",
            labels=["channel", "status"],
        )
        up = GaugeMetricFamily("rollouts_ui_database_up", "1 when the database answered this scrape.")
        try:
            for row in AuditEntry.objects.order_by().values("action", "outcome").annotate(n=Count("id")):
                actions.add_metric([row["action"], row["outcome"]], row["n"])
            rows = Notification.objects.order_by().values("subscription__channel", "status")
            for row in rows.annotate(n=Count("id")):
                notifications.add_metric([row["subscription__channel"], row["status"]], row["n"])
            up.add_metric([], 1)
        except DatabaseError:
            up.add_metric([], 0)
        yield actions
        yield notifications
        yield up


_DATABASE = CollectorRegistry(auto_describe=False)
_DATABASE.register(DatabaseCollector())


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = str(getattr(settings, "METRICS_TOKEN", "") or "")
    if token:
        sent = request.headers.get("Authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return HttpResponse("metrics need the bearer token (METRICS_TOKEN)\n", status=401,
                                content_type="text/plain")
    body = generate_latest(REGISTRY) + generate_latest(_DATABASE)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


PROBE_SECONDS = 2.0  # the bus probe of the live status answers within this, whatever Redis does


async def live_status(request: HttpRequest) -> JsonResponse:
    """``/api/v1/live-status``: is the live data fresh? Polled by every page's live indicator (live.js).

    ``{"bus": {"ok", "downSince", "error"}, "clusters": [freshness per cluster], "staleAfterSeconds"}``:
    the bus part is this server's own view of Redis; the clusters part is each watcher's report.
    """
    import asyncio
    import time

    from dashboard.access.visibility import may_read
    from dashboard.live import outage
    from dashboard.live.bus import BusError
    from dashboard.live.freshness import fleet_freshness, stale_after_seconds
    from dashboard.web import data

    user = await request.auser()
    if not may_read(user):
        return JsonResponse({"error": "authentication required"}, status=401)
    clusters: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            reports = await data.bus().cluster_reports()
    except (BusError, TimeoutError) as error:
        outage.failed(str(error) or f"no answer from Redis within {PROBE_SECONDS:g}s")
    else:
        outage.recovered()
        clusters = fleet_freshness(reports, now=time.time(), stale_after=stale_after_seconds())
    response = JsonResponse(
        {"bus": outage.state(), "clusters": clusters, "staleAfterSeconds": stale_after_seconds()}
    )
    response["Cache-Control"] = "no-store"
    return response
