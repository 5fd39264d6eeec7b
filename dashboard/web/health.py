"""Liveness and readiness (``/healthz``, ``/readyz``); the checks are ``dashboard.observability.readiness``.

``/healthz`` answers as long as the process serves requests (liveness: restart me if not).
``/readyz`` checks the database, Redis and every configured cluster, and names each one that is down:
``{"status": "unavailable", "failing": ["cluster:prod"], "checks": {"database": "ok", …}}`` with 503.
``?skip=clusters`` (or ``?skip=cluster:prod``, repeatable or comma-separated) leaves checks out.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from dashboard.observability.readiness import run_checks


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    values = request.GET.getlist("skip")
    skip = {part.strip() for value in values for part in value.split(",") if part.strip()}
    checks = run_checks(skip)
    failing = [check.name for check in checks if not check.ok]
    body = {
        "status": "unavailable" if failing else "ok",
        "failing": failing,
        "checks": {check.name: check.detail for check in checks},
    }
    return JsonResponse(body, status=503 if failing else 200)
