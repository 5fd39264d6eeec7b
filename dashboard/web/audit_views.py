"""The audit page (search) and its CSV / JSON exports.

Filters (query string, all optional, combined with AND): ``q`` (free text over actor, rollout,
namespace, detail), ``actor``, ``action``, ``outcome`` (the final one), ``cluster``, ``namespace``,
``rollout``, ``since`` / ``until`` (ISO dates or times, UTC). A user sees the attempts on rollouts they
may see (superusers: all). Exports carry the same rows as the search, up to ``EXPORT_LIMIT``.

Non-goals: editing anything (the audit is append-only), charts.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from dashboard.access.policy import ACTIONS, GET
from dashboard.access.rbac import access_for
from dashboard.access.visibility import may_read
from dashboard.actions.live import entry_json
from dashboard.actions.models import AuditEntry, Outcome

PAGE_SIZE = 100
EXPORT_LIMIT = 50_000
SCAN_BATCH = 2_000
CSV_FIELDS = (
    "id",
    "at",
    "actor",
    "groups",
    "action",
    "cluster",
    "namespace",
    "rollout",
    "outcome",
    "detail",
    "seen",
    "params",
    "changes",
    "requests",
    "idempotencyKey",
    "finishedAt",
    "reason",  # guard rails: the reason given (or a vote's comment)
    "guard",  # guard rails: the request it ran for, its approvers, a broken glass
)


class BadFilter(ValueError):
    pass


def _parse_time(name: str, value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadFilter(
            f"{name}={value!r} is not an ISO date or time (e.g. 2026-11-29 or 2026-11-29T10:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def search(params: Any) -> QuerySet[AuditEntry]:
    """The attempts matching the filters in ``params`` (a QueryDict or dict), newest first."""
    rows = AuditEntry.objects.attempts()
    text = str(params.get("q") or "").strip()
    if text:
        rows = rows.filter(
            Q(actor__icontains=text)
            | Q(rollout__icontains=text)
            | Q(namespace__icontains=text)
            | Q(detail__icontains=text)
            | Q(result__detail__icontains=text)
        )
    for field in ("actor", "action", "cluster", "namespace", "rollout"):
        value = str(params.get(field) or "").strip()
        if value:
            rows = rows.filter(**{field: value})
    outcome = str(params.get("outcome") or "").strip()
    if outcome:
        if outcome not in Outcome.values:
            raise BadFilter(f"outcome={outcome!r} is not one of {', '.join(Outcome.values)}")
        rows = rows.filter(Q(outcome=outcome) | Q(outcome=Outcome.ACCEPTED, result__outcome=outcome))
    for name, lookup in (("since", "at__gte"), ("until", "at__lte")):
        value = str(params.get(name) or "").strip()
        if value:
            rows = rows.filter(**{lookup: _parse_time(name, value)})
    return rows


def visible_entries(user: Any, rows: QuerySet[AuditEntry], limit: int) -> Iterator[AuditEntry]:
    """Rows on rollouts the user may see, at most ``limit``, scanning in batches (keys repeat a lot)."""
    access = access_for(user)
    verdicts: dict[str, bool] = {}
    given = 0
    for entry in rows.iterator(chunk_size=SCAN_BATCH):
        allowed = verdicts.get(entry.key)
        if allowed is None:
            allowed = verdicts[entry.key] = access.can(GET, entry.key)
        if allowed:
            yield entry
            given += 1
            if given >= limit:
                return


def _gate(request: HttpRequest) -> HttpResponse | None:
    if may_read(request.user):
        return None
    return HttpResponseRedirect(f"{settings.LOGIN_URL}?{urlencode({'next': request.get_full_path()})}")


@never_cache
@require_GET
def audit_page(request: HttpRequest) -> HttpResponse:
    refused = _gate(request)
    if refused is not None:
        return refused
    error = ""
    try:
        entries = list(visible_entries(request.user, search(request.GET), PAGE_SIZE + 1))
    except BadFilter as problem:
        entries, error = [], str(problem)
    query = request.GET.urlencode()
    context = {
        "entries": [entry_json(e) for e in entries[:PAGE_SIZE]],
        "more": len(entries) > PAGE_SIZE,
        "filters": {
            k: request.GET.get(k, "")
            for k in ("q", "actor", "action", "outcome", "cluster", "namespace", "rollout", "since", "until")
        },
        "actions": ACTIONS,
        "outcomes": Outcome.values,
        "error": error,
        "query": query,
        "page": "audit",
    }
    return render(request, "audit/audit.html", context, status=400 if error else 200)


def _export_rows(request: HttpRequest) -> Iterable[dict[str, Any]]:
    return (entry_json(e) for e in visible_entries(request.user, search(request.GET), EXPORT_LIMIT))


def _csv_cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), default=str)
    # Spreadsheet formula injection: a cell starting with = + - @ is made inert (OWASP's advice).
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@never_cache
@require_GET
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse:
    if not may_read(request.user):
        return JsonResponse({"error": "authentication required"}, status=401)
    try:
        search(request.GET).exists()
    except BadFilter as problem:
        return JsonResponse({"error": str(problem)}, status=400)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if fmt == "json":
        rows = list(_export_rows(request))
        response: HttpResponse = JsonResponse({"count": len(rows), "entries": rows})
        response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.json"'
        return response
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_FIELDS)
    for row in _export_rows(request):
        writer.writerow([_csv_cell("" if row.get(field) is None else row.get(field)) for field in CSV_FIELDS])
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.csv"'
    return response
