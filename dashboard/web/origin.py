"""The websocket Origin check: a socket opens only from this site's own origin or a CSRF trusted origin.

Browsers do not apply the same-origin policy to websockets, so a page on any origin could open one with
the user's session cookie. The check is Django's CSRF Origin check for POSTs, applied to the handshake:
the Origin must equal ``<scheme>://<host>`` of the request itself (the scheme as ``request.is_secure()``
sees it, honouring ``SECURE_PROXY_SSL_HEADER``; the host as ``request.get_host()`` gives it, so it must be
in ``ALLOWED_HOSTS`` and keeps its port), or be in ``CSRF_TRUSTED_ORIGINS`` (exactly, or under a
``scheme://*.domain`` pattern). Scheme, host and port all count. A handshake without an Origin is refused:
browsers always send one, and nothing else needs the session cookie.

Non-goals: authentication (``AuthMiddlewareStack``) and per-rollout permissions (the consumers).
"""

from __future__ import annotations

import io
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.utils.http import is_same_domain

_HTTP_SCHEME = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def _origin_header(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers") or ():
        if name.lower() == b"origin":
            return bytes(value).decode("latin1")
    return None


def _as_request(scope: dict[str, Any]) -> ASGIRequest:
    """The handshake as Django sees an HTTP request, so host and scheme are read as for a POST."""
    http_scope = {
        **scope,
        "type": "http",
        "method": "GET",
        "scheme": _HTTP_SCHEME.get(str(scope.get("scheme") or "ws"), "http"),
    }
    return ASGIRequest(http_scope, io.BytesIO())


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the websocket handshake in ``scope`` comes from an origin a POST would be accepted from."""
    origin = _origin_header(scope)
    if not origin:
        return False
    request = _as_request(scope)
    try:
        own = f"{'https' if request.is_secure() else 'http'}://{request.get_host()}"
    except DisallowedHost:
        pass
    else:
        if origin == own:
            return True
    trusted = list(settings.CSRF_TRUSTED_ORIGINS)
    if origin in {o for o in trusted if "*" not in o}:
        return True
    patterns: dict[str, list[str]] = defaultdict(list)
    for parsed in (urlsplit(o) for o in trusted if "*" in o):
        patterns[parsed.scheme].append(parsed.netloc.lstrip("*"))
    try:
        parsed_origin = urlsplit(origin)
    except ValueError:
        return False
    return any(is_same_domain(parsed_origin.netloc, host) for host in patterns.get(parsed_origin.scheme, ()))


class SameOriginValidator:
    """ASGI middleware: refuse (403 at the handshake) the websockets ``origin_allowed`` refuses."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope.get("type") == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
