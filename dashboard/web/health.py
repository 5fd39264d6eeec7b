"""Liveness and readiness. Readiness names each dependency that is down, so an operator knows which."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {"database": _check_database()}
    if settings.REDIS_URL:
        checks["redis"] = _check_redis(settings.REDIS_URL)
    ready = all(result == "ok" for result in checks.values())
    body = {"status": "ok" if ready else "unavailable", "checks": checks}
    return JsonResponse(body, status=200 if ready else 503)


def _check_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any driver error means "not ready"; the reason is reported
        return f"error: {type(error).__name__}"
    return "ok"


def _check_redis(url: str) -> str:
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2).ping()
    except Exception as error:
        return f"error: {type(error).__name__}"
    return "ok"
