"""Liveness and readiness (``/healthz``, ``/readyz``); the checks are ``dashboard.observability.readiness``.

``/healthz`` answers as long as the process serves requests (liveness: restart me if not).
``/readyz`` checks the database, Redis and every configured cluster, and names each one that is down:
``{"status": "unavailable", "failing": ["cluster:prod"], "checks": {"database": "ok", …}}`` with 503.
``?skip=clusters`` (or ``?skip=cluster:prod``, repeatable or comma-separated) leaves checks out.
Only signed-in users (or everyone, with ``READYZ_DETAILS_PUBLIC``) see which checks failed and why;
anonymous callers (probes) get the status and the status code alone: cluster names are not public.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse

from dashboard.observability.readiness import run_checks


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    values = request.GET.getlist("skip")
    skip = {part.strip() for value in values for part in value.split(",") if part.strip()}
    checks = run_checks(skip)
    failing = [check.name for check in checks if not check.ok]
    body: dict[str, object] = {"status": "unavailable" if failing else "ok"}
    if settings.READYZ_DETAILS_PUBLIC or _signed_in(request):
        body["failing"] = failing
        body["checks"] = {check.name: check.detail for check in checks}
    return JsonResponse(body, status=503 if failing else 200)


def _signed_in(request: HttpRequest) -> bool:
    try:
        return bool(request.user.is_authenticated)
    except Exception:  # the session store is down: treat as anonymous, still answer
        return False
