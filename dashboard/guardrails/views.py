"""The guard rails' HTTP API and rules page — thin: parse, call the service, answer.

- ``GET  /api/v1/requests?rollout=C/N/R[&open=1]`` — the rollout's approval requests, with this user's
  ``mayApprove`` / ``mayDeny`` / ``whyNot``; expired or overtaken ones are closed first.
- ``POST /api/v1/requests`` ``{"rollout", "action", "seen", "params", "reason", "breakGlass"}`` → 201.
- ``GET  /api/v1/requests/<id>``; ``POST /api/v1/requests/<id>/approve`` and ``…/deny`` with
  ``{"seen": {"podHash", "stepIndex"}, "comment"}`` — the approval is bound to what its approver saw.
- ``GET  /api/v1/guardrails`` (every rule, each freeze's state now) and ``GET /api/v1/freezes``.
- ``/guardrails/`` — the same rules as a page.

Errors are ``{"error", "code", "field"}`` with 400 (bad body; ``field`` names it), 401, 403 (not
permitted, not an approver, own request), 404, 409 (already decided, expired, void, frozen, a request
already open) and 422 (no approval needed, reason missing or not matching). Session auth with CSRF.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dashboard import jsonbody
from dashboard.access.policy import GET
from dashboard.access.rbac import aaccess_for
from dashboard.access.visibility import may_read
from dashboard.guardrails import service
from dashboard.guardrails.loader import current_rules
from dashboard.guardrails.models import ApprovalRequest
from dashboard.guardrails.rules import GuardRules
from dashboard.web import data

BODY_MAX_BYTES = 16 * 1024


def _error(status: int, message: str, code: str, field: str = "") -> JsonResponse:
    return JsonResponse({"error": message, "code": code, "field": field}, status=status)


def _refusal(refusal: service.GuardRefusal) -> JsonResponse:
    return _error(refusal.status, refusal.message, refusal.code, refusal.field)


async def _signed_in(request: HttpRequest) -> Any:
    user = await request.auser()
    return user if user.is_authenticated and user.is_active else None


def _body(request: HttpRequest) -> dict[str, Any] | JsonResponse:
    try:
        body = jsonbody.loads(request.body or b"{}", what="the request body", max_bytes=BODY_MAX_BYTES)
    except jsonbody.JsonBodyError as error:
        return _error(400, str(error), "bad-request", "body")
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object", "bad-request", "body")
    return body


@never_cache
@require_http_methods(["GET", "POST"])
async def requests_collection(request: HttpRequest) -> JsonResponse:
    user = await _signed_in(request)
    if user is None:
        return _error(401, "authentication required", "unauthenticated")
    if request.method == "POST":
        return await _create(request, user)
    key = request.GET.get("rollout", "")
    if data.split_key(key) is None:
        return _error(400, "rollout=cluster/namespace/name is required", "bad-request", "rollout")
    if not (await aaccess_for(user)).can(GET, key):
        return _error(404, f"no rollout {key}", "not-found", "rollout")
    _, view = await data.gather_rollout(key)
    open_only = request.GET.get("open") in ("1", "true")

    def listing() -> list[dict[str, Any]]:
        service.close_due(key, view)
        return [service.request_json(r, user) for r in service.requests_for(key, open_only=open_only)]

    return JsonResponse({"rollout": key, "requests": await sync_to_async(listing)()})


async def _create(request: HttpRequest, user: Any) -> JsonResponse:
    body = _body(request)
    if isinstance(body, JsonResponse):
        return body
    key, action = str(body.get("rollout") or ""), str(body.get("action") or "")
    if data.split_key(key) is None:
        return _error(400, "rollout must be cluster/namespace/name", "bad-request", "rollout")
    _, view = await data.gather_rollout(key)

    def create() -> dict[str, Any]:
        made = service.request_create(
            user,
            action,
            key,
            view=view,
            seen=body.get("seen"),
            params=body.get("params"),
            reason=body.get("reason", ""),
            break_glass=body.get("breakGlass") is True,
        )
        return service.request_json(made, user)

    try:
        return JsonResponse(await sync_to_async(create)(), status=201)
    except service.GuardRefusal as refusal:
        return _refusal(refusal)


@never_cache
@require_GET
async def awaiting(request: HttpRequest) -> JsonResponse:
    """``{"awaiting": {key: "awaiting approval (1 of 2)"}}`` for the fleet rows this user may see."""
    user = await _signed_in(request)
    if user is None:
        return _error(401, "authentication required", "unauthenticated")
    access = await aaccess_for(user)
    found = await sync_to_async(service.awaiting_words)()
    return JsonResponse({"awaiting": {k: v for k, v in found.items() if access.can(GET, k)}})


@never_cache
@require_GET
async def request_detail(request: HttpRequest, request_id: int) -> JsonResponse:
    user = await _signed_in(request)
    if user is None:
        return _error(401, "authentication required", "unauthenticated")

    def load() -> dict[str, Any] | None:
        found = ApprovalRequest.objects.filter(pk=request_id).first()
        if found is None or not service.access_for(user).can(GET, found.key):
            return None
        return service.request_json(found, user)

    document = await sync_to_async(load)()
    if document is None:
        return _error(404, f"no approval request #{request_id}", "not-found")
    return JsonResponse(document)


@never_cache
@require_POST
async def request_vote(request: HttpRequest, request_id: int, vote: str) -> JsonResponse:
    user = await _signed_in(request)
    if user is None:
        return _error(401, "authentication required", "unauthenticated")
    body = _body(request)
    if isinstance(body, JsonResponse):
        return body
    key = await sync_to_async(
        lambda: (
            ApprovalRequest.objects.filter(pk=request_id)
            .values_list("cluster", "namespace", "rollout")
            .first()
        )
    )()
    view = (await data.gather_rollout("/".join(key)))[1] if key else None

    def cast() -> dict[str, Any]:
        done = service.request_vote(
            user, request_id, vote, seen=body.get("seen"), comment=body.get("comment", ""), view=view
        )
        return service.request_json(done, user)

    try:
        return JsonResponse(await sync_to_async(cast)())
    except service.GuardRefusal as refusal:
        return _refusal(refusal)


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def rules_json(rules: GuardRules, now: datetime) -> dict[str, Any]:
    from dashboard.guardrails.rules import Freeze
    from dashboard.guardrails.windows import active_span

    freezes = []
    for rule in rules.freezes:
        span = active_span([(rule.schedule, rule.tz)], now)
        until = Freeze(rule.name, span[1], rule.zone).until_text(now) if span else ""
        freezes.append(
            {
                "name": rule.name,
                "actions": list(rule.actions),
                "scope": rule.scope.describe(),
                "schedule": rule.text,
                "zone": rule.zone,
                "active": span is not None,
                "until": span[1].isoformat() if span else None,
                "untilText": until,
            }
        )
    return {
        "approvals": [
            {
                "actions": list(r.actions),
                "scope": r.scope.describe(),
                "count": r.count,
                "approvers": list(r.approvers),
                "expiresSeconds": int(r.expires.total_seconds()),
                "expires": _duration(r.expires),
            }
            for r in rules.approvals
        ],
        "freezes": freezes,
        "reasons": [
            {"actions": list(r.actions), "scope": r.scope.describe(), "pattern": r.pattern, "hint": r.hint}
            for r in rules.reasons
        ],
        "neverFrozen": ["abort", "pause"],
    }


@never_cache
@require_GET
async def guardrails_rules(request: HttpRequest) -> JsonResponse:
    if not may_read(await request.auser()):
        return _error(401, "authentication required", "unauthenticated")
    return JsonResponse(rules_json(current_rules(), timezone.now()))


@never_cache
@require_GET
async def freezes(request: HttpRequest) -> JsonResponse:
    if not may_read(await request.auser()):
        return _error(401, "authentication required", "unauthenticated")
    return JsonResponse({"freezes": rules_json(current_rules(), timezone.now())["freezes"]})


@never_cache
@require_GET
def rules_page(request: HttpRequest) -> HttpResponse:
    if not may_read(request.user):
        from urllib.parse import urlencode

        from django.conf import settings
        from django.http import HttpResponseRedirect

        return HttpResponseRedirect(f"{settings.LOGIN_URL}?{urlencode({'next': request.get_full_path()})}")
    rules = rules_json(current_rules(), timezone.now())
    return render(request, "guardrails/rules.html", {"rules": rules, "page": "guardrails"})
