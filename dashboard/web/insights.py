"""The Insights and Environments pages and their JSON (and CSV) API. Thin: parse, scope, compute, render.

Insights: ``/insights/`` and ``/api/v1/insights`` (``?format=csv&table=series|steps|pauses|findings|actors``)
answer ``dashboard.history.insights`` for the filters in the query string, counted over what the user may
see; a bad filter is a 400 naming its field. Each time series carries its least-squares trend line.

Environments: ``/environments/`` and ``/api/v1/environments`` (``?commit=`` finds where a commit or image
runs) group the fleet rows the user may see (``dashboard.domain.environments``); the page re-asks the API
when the fleet websocket says something changed (the socket is the doorbell, the server decides).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from dashboard.domain.environments import environments, find_commit
from dashboard.history import insights as ins
from dashboard.web import data
from dashboard.web.fleet_index import FIELDS
from dashboard.web.views import _reader, embed_json

CSV_TABLES = ("series", "steps", "pauses", "findings", "actors")


def trend(values: Sequence[float | None]) -> list[float | None]:
    """The least-squares line through the known values (by position), at every position (pure)."""
    points = [(i, float(v)) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return [None for _ in values]
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else 0.0
    return [round(mean_y + slope * (i - mean_x), 4) for i in range(len(values))]


def buckets(start: date, end: date, size: str) -> list[str]:
    """Every bucket of the period, as the database names them: days, or weeks from their Monday (pure)."""
    first = start - timedelta(days=start.weekday()) if size == "week" else start
    step = timedelta(days=7 if size == "week" else 1)
    out = []
    while first <= end:
        out.append(first.isoformat())
        first += step
    return out


_EMPTY = {
    "releases": {
        "deployments": 0,
        "finished": 0,
        "failed": 0,
        "aborted": 0,
        "rolledBack": 0,
        "changeFailureRate": None,
    },
    "leadTime": {"releases": 0, "medianSeconds": None, "p90Seconds": None},
    "restore": {"incidents": 0, "open": 0, "medianSeconds": None, "p90Seconds": None},
}


def with_trends(document: dict[str, Any]) -> dict[str, Any]:
    """Fill the buckets where nothing happened (zero deployments is a figure too), then add a ``trend`` to
    each series figure: deployments, change failure rate, lead time, restore."""
    filters = document["filters"]
    start = datetime.fromisoformat(filters["from"].replace("Z", "+00:00")).date()
    end = (datetime.fromisoformat(filters["to"].replace("Z", "+00:00")) - timedelta(microseconds=1)).date()
    every = buckets(start, end, filters["bucket"])
    for figure, empty in _EMPTY.items():
        known = {p["bucket"]: p for p in document[figure]["series"]}
        document[figure]["series"] = [known.get(b) or {"bucket": b, **empty} for b in every]
    for figure, field in (
        ("releases", "deployments"),
        ("releases", "changeFailureRate"),
        ("leadTime", "medianSeconds"),
        ("restore", "medianSeconds"),
    ):
        series = document[figure]["series"]
        document[figure].setdefault("trend", {})[field] = trend([p.get(field) for p in series])
    return document


def _document(request: HttpRequest) -> dict[str, Any]:
    filters = ins.parse_filters(request.GET, now=data.now())
    return with_trends(ins.insights(filters, request.reader))  # type: ignore[attr-defined]


def csv_table(document: Mapping[str, Any], table: str) -> str:
    """One table of the document as CSV (seconds as numbers, UTC dates)."""
    out = io.StringIO()
    writer = csv.writer(out)
    if table == "series":
        writer.writerow(
            [
                "bucket",
                "deployments",
                "finished",
                "failed",
                "change_failure_rate",
                "lead_time_median_s",
                "time_to_restore_median_s",
                "incidents",
            ]
        )
        lead = {p["bucket"]: p for p in document["leadTime"]["series"]}
        restore = {p["bucket"]: p for p in document["restore"]["series"]}
        buckets = sorted({*lead, *restore, *(p["bucket"] for p in document["releases"]["series"])})
        releases = {p["bucket"]: p for p in document["releases"]["series"]}
        for bucket in buckets:
            r, l_, t = releases.get(bucket, {}), lead.get(bucket, {}), restore.get(bucket, {})
            writer.writerow(
                [
                    bucket,
                    r.get("deployments", 0),
                    r.get("finished", 0),
                    r.get("failed", 0),
                    r.get("changeFailureRate"),
                    l_.get("medianSeconds"),
                    t.get("medianSeconds"),
                    t.get("incidents", 0),
                ]
            )
    else:
        rows = document[table]
        columns = (
            list(rows[0])
            if rows
            else {"steps": ["step"], "pauses": ["reason"], "findings": ["code"], "actors": ["actor"]}[table]
        )
        writer.writerow(columns)
        for row in rows:
            writer.writerow([row.get(c) for c in columns])
    return out.getvalue()


@never_cache
@require_GET
@_reader(api=True)
async def api_insights(request: HttpRequest) -> HttpResponse:
    fmt = request.GET.get("format") or "json"
    table = request.GET.get("table") or "series"
    if fmt not in ("json", "csv"):
        return JsonResponse(
            {"error": f"format: expected json or csv, got {fmt!r}", "field": "format"}, status=400
        )
    if fmt == "csv" and table not in CSV_TABLES:
        return JsonResponse(
            {"error": f"table: expected one of {', '.join(CSV_TABLES)}, got {table!r}", "field": "table"},
            status=400,
        )
    try:
        document = await sync_to_async(_document)(request)
    except ins.InsightsError as error:
        return JsonResponse({"error": str(error), "field": error.field}, status=400)
    except ins.InsightsUnavailable as error:
        return JsonResponse({"error": str(error)}, status=501)
    if fmt == "csv":
        response = HttpResponse(csv_table(document, table), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="insights-{table}.csv"'
        return response
    return JsonResponse(document)


@never_cache
@require_GET
@_reader()
async def insights_page(request: HttpRequest) -> HttpResponse:
    error, document, status = "", None, 200
    try:
        document = await sync_to_async(_document)(request)
    except ins.InsightsError as problem:
        error, status = str(problem), 400
    except ins.InsightsUnavailable as problem:
        error = str(problem)  # the embedded SQLite mode: the page explains, it is not a bad request
    query = request.GET
    context = {
        "page": "insights",
        "error": error,
        "document_json": embed_json(document),
        "filters": {
            k: query.get(k, "")
            for k in ("cluster", "namespace", "rollout", "label", "from", "to", "days", "bucket")
        },
        "summary": document,
        "query": request.GET.urlencode(),
    }
    return render(request, "dashboard/insights.html", context, status=status)


# --- environments ------------------------------------------------------------------------------------


async def _environments(request: HttpRequest) -> dict[str, Any]:
    stream_id, compact = await data.fleet_rows_for(request.reader)  # type: ignore[attr-defined]
    rows = [dict(zip(FIELDS, row, strict=False)) for row in compact]
    apps = environments(rows, group_by=settings.ENVIRONMENTS_GROUP_BY, order=settings.ENVIRONMENTS_ORDER)
    commit = (request.GET.get("commit") or "").strip()[:200]
    found = find_commit(apps, commit) if commit else []
    return {
        "streamId": stream_id,
        "groupBy": settings.ENVIRONMENTS_GROUP_BY,
        "order": list(settings.ENVIRONMENTS_ORDER),
        "commit": commit,
        "found": found,
        "apps": apps,
    }


@never_cache
@require_GET
@_reader(api=True)
async def api_environments(request: HttpRequest) -> JsonResponse:
    return JsonResponse(await _environments(request))


@never_cache
@require_GET
@_reader()
async def environments_page(request: HttpRequest) -> HttpResponse:
    document = await _environments(request)
    context = {"page": "environments", "document_json": embed_json(document), "commit": document["commit"]}
    return render(request, "dashboard/environments.html", context)
