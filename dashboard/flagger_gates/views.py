"""HTTP for the gate server: Flagger's webhook endpoint and the people-facing Canary action API.

Thin: parse, call one function of ``services``, answer. The webhook answers like flagger-loadtester's
``/gate/check`` (200 ``Approved`` / 403 ``Forbidden``); malformed requests get 400 with the reason, calls
without this Canary's gate token 401, and neither is recorded.

Non-goals: deciding anything (``services``), rendering pages.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from dashboard import jsonbody
from dashboard.access.rbac import can
from dashboard.flagger_gates import services

log = logging.getLogger(__name__)
BODY_MAX_BYTES = 64 * 1024  # Flagger's payload is a few hundred bytes plus the hook's metadata


@csrf_exempt  # Flagger cannot send a CSRF token; the gate only reads decisions and records the call
@require_POST
def gate_webhook(request: HttpRequest, cluster: str, gate: str) -> HttpResponse:
    try:
        body = jsonbody.loads(request.body or b"null", max_bytes=BODY_MAX_BYTES)
    except jsonbody.JsonBodyError as error:
        status = 413 if error.too_large else 400
        return HttpResponse(str(error), status=status, content_type="text/plain")
    try:
        payload = services.parse_payload(gate, body)
        token = services.token_from(body, request.GET.get("token", ""))
    except services.GateError as error:
        status = 404 if gate not in services.GATES else 400
        return HttpResponse(str(error), status=status, content_type="text/plain")
    if not services.authenticate(cluster, payload, token):
        log.warning(
            "refused a %s gate call for %s/%s/%s: no valid gate token",
            gate,
            cluster,
            payload.namespace,
            payload.name,
        )
        return HttpResponse(
            "Unauthorized: this call carries no valid gate token for this Canary "
            "(put one in the webhook's metadata as 'token', see the operator guide)",
            status=401,
            content_type="text/plain",
        )
    status, text = services.gate_answer(cluster, gate, payload)
    return HttpResponse(text, status=status, content_type="text/plain")


@require_POST
def canary_action(request: HttpRequest, cluster: str, namespace: str, name: str, action: str) -> JsonResponse:
    if not request.user.is_authenticated:
        return JsonResponse({"error": "log in to act on canaries"}, status=401)
    result = services.canary_act(request.user, action, cluster, namespace, name)
    return JsonResponse(
        {"outcome": result.outcome, "detail": result.detail, "audit": result.audit_id}, status=result.status
    )


@require_GET
def canary_gates(request: HttpRequest, cluster: str, namespace: str, name: str) -> JsonResponse:
    if not can(request.user, "get", f"{cluster}/{namespace}/{name}"):
        return JsonResponse({"error": "not found"}, status=404)
    return JsonResponse({"gates": services.gate_states(cluster, namespace, name)})
