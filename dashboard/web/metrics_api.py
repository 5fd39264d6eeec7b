"""JSON for the rollout page's metrics panel and its dry-run button.

``GET …/metrics`` answers, for one rollout: the Prometheus state for its cluster (``ok`` / ``unreachable`` /
``unconfigured`` with a message), one chart per Prometheus analysis metric (the query over the run's window,
its thresholds, every measurement with its verdict, the step window to shade) and the standard
canary-vs-stable error-rate and latency panel. ``GET …/analysis-dryrun`` evaluates the latest analysis run's
metrics against the stable version now. Prometheus trouble is reported in the document, never raised: the
rest of the page keeps working.

Views stay thin: check access, fetch the view, call ``dashboard.metrics``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from dashboard.access.visibility import can_view
from dashboard.metrics import charts
from dashboard.metrics.client import UNREACHABLE, Outcome, PrometheusClient
from dashboard.metrics.config import PANEL_TITLES, MetricsConfigError, from_settings
from dashboard.metrics.dryrun import run_dry_run
from dashboard.web import data
from dashboard.web.views import _reader

PANEL_SECONDS = 600


def _not_found(key: str) -> JsonResponse:
    return JsonResponse({"error": f"no rollout {key}"}, status=404)


def _client(cluster: str) -> tuple[PrometheusClient | None, dict[str, Any]]:
    try:
        config = from_settings()
    except MetricsConfigError as error:
        return None, {"state": "unconfigured", "message": f"metrics configuration error: {error}"}
    url = config.url_for(cluster)
    if not url:
        return None, {
            "state": "unconfigured",
            "message": f"no Prometheus is configured for cluster {cluster!r} (set PROMETHEUS_URLS)",
        }
    return PrometheusClient(url, config.timeout), {"state": "ok", "url": url, "message": ""}


def _state(prometheus: dict[str, Any], outcomes: list[Outcome]) -> dict[str, Any]:
    down = next((o for o in outcomes if o.state == UNREACHABLE), None)
    if down is not None:
        return {**prometheus, "state": "unreachable", "message": down.message}
    return prometheus


async def _view(request: HttpRequest, cluster: str, namespace: str, name: str) -> tuple[str, Any]:
    key = f"{cluster}/{namespace}/{name}"
    if not can_view(request.reader, key):  # type: ignore[attr-defined]
        return key, None
    _, view = await data.gather_rollout(key)
    return key, view


@never_cache
@require_GET
@_reader(api=True)
async def api_metrics(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    key, view = await _view(request, cluster, namespace, name)
    if view is None:
        return _not_found(key)
    now = time.time()
    specs = charts.analysis_chart_specs(view, now)
    client, prometheus = _client(cluster)
    if client is None:
        return JsonResponse(
            {"key": key, "now": now, "prometheus": prometheus, "analyses": specs, "panel": []}
        )
    panel_queries = from_settings().panel_for(cluster, namespace, name)
    range_calls = [
        client.query_range(
            s["query"],
            s["range"]["start"],
            s["range"]["end"],
            charts.step_for(s["range"]["start"], s["range"]["end"]),
        )
        for s in specs
    ]
    start = now - PANEL_SECONDS
    panel_calls = [
        client.query_range(q, start, now, charts.step_for(start, now)) for q in panel_queries.values()
    ]
    outcomes = list(await asyncio.gather(*range_calls, *panel_calls))
    for spec, outcome in zip(specs, outcomes, strict=False):
        spec["series"] = charts.matrix_series(outcome.payload) if outcome.ok else []
        spec["error"] = "" if outcome.ok else outcome.message
    panel = []
    for (panel_name, query), outcome in zip(panel_queries.items(), outcomes[len(specs) :], strict=True):
        panel.append(
            {
                "name": panel_name,
                "title": PANEL_TITLES.get(panel_name, panel_name),
                "query": query,
                "series": charts.matrix_series(outcome.payload) if outcome.ok else [],
                "error": "" if outcome.ok else outcome.message,
            }
        )
    return JsonResponse(
        {
            "key": key,
            "now": now,
            "prometheus": _state(prometheus, outcomes),
            "analyses": specs,
            "panel": panel,
        }
    )


@never_cache
@require_GET
@_reader(api=True)
async def api_dryrun(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    """Dry-run the latest analysis run's Prometheus metrics against the stable version."""
    key, view = await _view(request, cluster, namespace, name)
    if view is None:
        return _not_found(key)
    client, prometheus = _client(cluster)
    if client is None:
        return JsonResponse(
            {"key": key, "prometheus": prometheus, "error": prometheus["message"]}, status=503
        )
    runs = [run for rev in view.get("revisions") or [] for run in rev.get("analysisRuns") or []]
    runs.sort(key=lambda r: r.get("createdAt") or "", reverse=True)
    run = next(
        (r for r in runs if any(m.get("provider") == "prometheus" for m in r.get("metrics") or [])), None
    )
    if run is None:
        return JsonResponse(
            {"key": key, "error": "this rollout has no analysis run with Prometheus metrics"}, status=404
        )
    stable, canary = view.get("stableRS") or None, run.get("podTemplateHash") or None
    metrics = []
    for m in run.get("metrics") or []:
        if m.get("provider") != "prometheus":
            continue
        query = str(m.get("query") or "")
        if stable and canary:  # the run's queries select the canary by hash: point them at stable
            query = query.replace(canary, stable)
        metrics.append(
            {
                "name": m.get("name"),
                "successCondition": m.get("successCondition") or "",
                "failureCondition": m.get("failureCondition") or "",
                "provider": {"prometheus": {"query": query}},
            }
        )
    result = await run_dry_run(client, metrics, [], stable_hash=stable, canary_hash=canary)
    return JsonResponse({"key": key, "run": run.get("name"), **result.to_dict()})
