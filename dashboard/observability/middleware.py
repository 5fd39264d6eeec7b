"""Request ids and one structured access-log line per request; pages that answer while Redis is down.

The id comes from the ``X-Request-ID`` header when a proxy set a sane one (letters, digits, ``.-_``, at
most 64), else a new random one; it is put in the logging context (``logs.request_id``) for everything
logged while the request runs and returned in the response's ``X-Request-ID``. Works in both sync and
async stacks (no thread hop under ASGI).

``LiveBusDownMiddleware`` turns a ``BusError`` (Redis unreachable) escaping a view into an answer: 503 JSON
naming the outage for the API, and for pages a 503 page saying "live updates are down since …" — never a
500. Pages that do not need the bus (login, audit, history) are untouched by an outage.

Non-goals: no tracing spans, no request bodies in logs (they may carry secrets).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin

from dashboard.live import outage
from dashboard.live.bus import BusError
from dashboard.observability.logs import request_id

log = logging.getLogger("rollouts_ui.request")
HEADER = "X-Request-ID"
_SANE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
# Probes and scrapes every few seconds would drown the log; they are logged only when they fail.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def incoming_id(request: HttpRequest) -> str:
    sent = request.headers.get(HEADER, "")
    return sent if _SANE.match(sent) else uuid.uuid4().hex


class RequestIdMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        rid = incoming_id(request)
        token = request_id.set(rid)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            _finish(request, response, rid, started)
            return response
        finally:
            request_id.reset(token)

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        rid = incoming_id(request)
        token = request_id.set(rid)
        started = time.perf_counter()
        try:
            get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]] = self.get_response
            response = await get_response(request)
            _finish(request, response, rid, started)
            return response
        finally:
            request_id.reset(token)


def _finish(request: HttpRequest, response: HttpResponseBase, rid: str, started: float) -> None:
    response[HEADER] = rid
    if request.path in QUIET_PATHS and response.status_code < 400:
        return
    # Only a user the request already loaded: resolving the lazy `request.user` here would touch the
    # session synchronously, which Django refuses inside an async request.
    user = getattr(request, "_cached_user", None) or getattr(request, "_acached_user", None)
    log.info(
        "%s %s %s",
        request.method,
        request.path,
        response.status_code,
        extra={
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            "user": getattr(user, "username", "") if getattr(user, "is_authenticated", False) else "",
        },
    )


class LiveBusDownMiddleware(MiddlewareMixin):
    """A view that needed the live bus while Redis is down answers 503 with the outage, not 500."""

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
        if not isinstance(exception, BusError):
            return None
        outage.failed(exception)
        state = outage.state()
        log.warning("live bus unavailable for %s %s: %s", request.method, request.path, exception)
        if request.path.startswith("/api/"):
            return JsonResponse(
                {"error": f"live updates are down since {state['downSince']}: Redis cannot be reached",
                 "liveDownSince": state["downSince"]},
                status=503,
            )
        return render(request, "live_unavailable.html", {"since": state["downSince"], "page": ""}, status=503)
