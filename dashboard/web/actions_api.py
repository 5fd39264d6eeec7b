"""``POST /api/v1/rollouts/{cluster}/{namespace}/{name}/actions/{action}`` — thin: parse, call, answer.

Body (JSON): ``{"seen": {"podHash", "stepIndex", "resourceVersion", "status", "paused", "aborted"},
"params": {"revision": N} | {"replicaSet": NAME}, "idempotencyKey": "…"}``; the key may also come as an
``Idempotency-Key`` header; ``seen`` must name the facts ``plans.SEEN_REQUIRED`` lists for the action. The
body is parsed by ``dashboard.jsonbody`` (size and depth bounded first). Session authentication with
CSRF (the ``X-CSRFToken`` header), like every form of the site. The service audits every attempt,
refusals included.

Optional ``"reason"`` (text; required where a guard rail asks for one) and ``"breakGlass": true`` (run
during a change freeze: needs the ``break-glass`` permission and a reason).

Answers: 200 done (also when nothing needed sending, with the reason), 202 accepted but still running
after ``ACTIONS_WAIT_SECONDS``, 400 bad request, 401 not signed in, 403 not permitted, 409 the rollout
moved on (``changes`` says what) or a guard rail stands in the way (``code`` ``frozen`` or
``approval-required``), 422 the action does not apply (e.g. unwedge of a non-orphan), 429 rate
limited, 502 the Kubernetes API refused (its message in ``detail``). A repeated idempotency key answers
with the first attempt and ``"replayed": true``.

Also ``GET …/actions`` (the actions this user may run on the rollout, and the page's action bar: each
action's ``buttons`` entry with applies/reason/params and this user's allowed/deniedReason, plus ``seen``)
and ``GET …/audit`` (its recent attempts), both filtered by the same permission checks.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from dashboard import jsonbody
from dashboard.access.policy import ACTIONS, GET
from dashboard.access.rbac import aaccess_for
from dashboard.access.visibility import may_read
from dashboard.actions.live import entry_json
from dashboard.actions.models import AuditEntry, Outcome
from dashboard.actions.plans import DESTRUCTIVE
from dashboard.actions.service import attempt_refused, rollout_act
from dashboard.web import data
from dashboard.web.rollout import actions as present_actions
from dashboard.web.rollout import with_permissions

STATUS = {
    Outcome.DONE: 200,
    Outcome.ACCEPTED: 202,
    Outcome.CONFLICT: 409,
    Outcome.REFUSED: 422,
    Outcome.FAILED: 502,
}
POLL_SECONDS = 0.1
BODY_MAX_BYTES = 16 * 1024  # seen, params and a key: a few hundred bytes


def _denied_status(detail: str) -> int:
    if detail.startswith("rate limited"):
        return 429
    if detail.startswith("not permitted"):
        return 403
    if detail.startswith(("frozen:", "needs approval:")):
        return 409  # a guard rail: the rollout's state (a freeze, an approval rule) stands in the way
    if detail.startswith("reason required:"):
        return 422
    return 400


# The guard rails' refusals, by the detail's first words: what a client branches on.
CODES = {
    "frozen:": "frozen",
    "needs approval:": "approval-required",
    "reason required:": "reason-required",
    "not permitted to break glass": "break-glass-forbidden",
}


def _answer(entry: AuditEntry, final: AuditEntry | None, replayed: bool) -> JsonResponse:
    document = entry_json(entry, final or entry)  # still running: the accepted row is the answer
    outcome = document["outcome"]
    status = _denied_status(document["detail"]) if outcome == Outcome.DENIED else STATUS.get(outcome, 200)
    code = next((c for prefix, c in CODES.items() if document["detail"].startswith(prefix)), "")
    if outcome == Outcome.DENIED and code:
        document["code"] = code
    response = JsonResponse({**document, "replayed": replayed}, status=status)
    if status == 429:
        response["Retry-After"] = str(settings.ACTIONS_RATE_WINDOW_SECONDS)
    return response


async def _wait_for_result(entry: AuditEntry) -> AuditEntry | None:
    if entry.outcome != Outcome.ACCEPTED:
        return entry
    deadline = time.monotonic() + settings.ACTIONS_WAIT_SECONDS
    while True:
        result = await AuditEntry.objects.filter(attempt=entry).afirst()
        if result is not None or time.monotonic() >= deadline:
            return result
        await asyncio.sleep(POLL_SECONDS)


@never_cache
@require_POST
async def run_action(
    request: HttpRequest, cluster: str, namespace: str, name: str, action: str
) -> JsonResponse:
    user = await request.auser()
    if not (user.is_authenticated and user.is_active):
        return JsonResponse({"error": "authentication required"}, status=401)
    key = f"{cluster}/{namespace}/{name}"
    try:
        body = jsonbody.loads(request.body or b"{}", what="the request body", max_bytes=BODY_MAX_BYTES)
    except jsonbody.JsonBodyError as error:
        entry = await sync_to_async(attempt_refused)(user, action, key, str(error))
        return _answer(entry, entry, False)
    if not isinstance(body, dict):
        entry = await sync_to_async(attempt_refused)(
            user, action, key, "the request body must be a JSON object"
        )
        return _answer(entry, entry, False)
    idempotency_key = str(body.get("idempotencyKey") or request.headers.get("Idempotency-Key") or "")
    _, view = await data.gather_rollout(key)  # its labels, for the guard rails' selectors
    try:
        entry, replayed = await sync_to_async(rollout_act)(
            user,
            action,
            key,
            seen=body.get("seen"),
            params=body.get("params"),
            idempotency_key=idempotency_key,
            reason=body.get("reason") or "",
            break_glass=body.get("breakGlass") is True,
            view=view,
        )
    except ValueError as error:  # unknown action, malformed key, or an idempotency key reused elsewhere
        entry = await sync_to_async(attempt_refused)(user, action, key, str(error))
        return _answer(entry, entry, False)
    final = await _wait_for_result(entry)
    return _answer(entry, final, replayed)


async def _reader(request: HttpRequest) -> Any:
    user = await request.auser()
    return user if may_read(user) else None


@never_cache
@require_GET
async def allowed_actions(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    user = await _reader(request)
    if user is None:
        return JsonResponse({"error": "authentication required"}, status=401)
    key = f"{cluster}/{namespace}/{name}"
    access = await aaccess_for(user)
    if not access.can(GET, key):
        return JsonResponse({"error": f"no rollout {key}"}, status=404)
    allowed = access.actions_on(key, ACTIONS) if user.is_authenticated else []
    document: dict[str, Any] = {"key": key, "actions": allowed, "confirm": sorted(DESTRUCTIVE & set(allowed))}
    _, view = await data.gather_rollout(key)
    if view is not None and view.get("controller") != "flagger":
        # The action bar as the page draws it: each action's rule and this user's right to run it.
        permissions = await sync_to_async(data.action_permissions_sync)(user, key)
        document.update(with_permissions(present_actions(view), permissions))
    return JsonResponse(document)


def _recent(key: str, limit: int) -> list[dict[str, Any]]:
    cluster, namespace, name = key.split("/")
    rows = AuditEntry.objects.attempts().filter(cluster=cluster, namespace=namespace, rollout=name)[:limit]
    return [entry_json(row) for row in rows]


@never_cache
@require_GET
async def rollout_audit(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    user = await _reader(request)
    if user is None:
        return JsonResponse({"error": "authentication required"}, status=401)
    key = f"{cluster}/{namespace}/{name}"
    if not (await aaccess_for(user)).can(GET, key):
        return JsonResponse({"error": f"no rollout {key}"}, status=404)
    return JsonResponse({"key": key, "entries": await sync_to_async(_recent)(key, 50)})
