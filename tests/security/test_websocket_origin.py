"""A websocket opens only from this site's own origin or a CSRF trusted origin: scheme, host and port all
count, exactly as Django's CSRF check counts them for a POST (Django's own check is the oracle here)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.middleware.csrf import CsrfViewMiddleware
from django.test import RequestFactory

from dashboard.web.origin import SameOriginValidator

SITE_HOST = "localhost:8000"
TRUSTED = ["https://dash.example.com", "https://*.corp.example"]
SCHEMES = ["http", "https"]
HOSTS = ["localhost", "127.0.0.1", "dash.example.com", "a.corp.example", "evil.example"]
PORTS = ["", ":8000", ":9999", ":443", ":4443"]
MATRIX = [f"{s}://{h}{p}" for s, h, p in itertools.product(SCHEMES, HOSTS, PORTS)]


async def _accepting_app(scope: Any, receive: Any, send: Any) -> None:
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})


async def _opens(origin: str | None, *, secure: bool = False, extra: list[tuple[bytes, bytes]] = ()) -> bool:  # type: ignore[assignment]
    headers = [(b"host", SITE_HOST.encode()), *extra]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    communicator = WebsocketCommunicator(SameOriginValidator(_accepting_app), "/ws/fleet/", headers=headers)
    communicator.scope["scheme"] = "wss" if secure else "ws"
    connected, _ = await communicator.connect()
    if connected:
        await communicator.disconnect()
    return connected


def _django_csrf_accepts(origin: str, *, secure: bool = False, **meta: str) -> bool:
    request = RequestFactory().post("/", HTTP_HOST=SITE_HOST, HTTP_ORIGIN=origin, secure=secure, **meta)
    return CsrfViewMiddleware(lambda r: None)._origin_verified(request)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def site(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    settings.CSRF_TRUSTED_ORIGINS = TRUSTED


@pytest.mark.parametrize("secure", [False, True], ids=["ws", "wss"])
@pytest.mark.parametrize("origin", MATRIX)
async def test_the_origin_matrix_matches_djangos_csrf_check(origin: str, secure: bool) -> None:
    assert await _opens(origin, secure=secure) == _django_csrf_accepts(origin, secure=secure)


@pytest.mark.parametrize(
    ("origin", "secure", "opens"),
    [
        ("http://localhost:8000", False, True),
        ("https://localhost:8000", True, True),
        ("http://127.0.0.1:9999", False, False),  # the probes: same host, other port
        ("https://localhost:4443", False, False),  # other scheme and port
        ("https://localhost:8000", False, False),  # other scheme
        ("http://localhost:8000", True, False),
        ("http://localhost", False, False),  # default port is another port
        ("https://dash.example.com", False, True),  # trusted
        ("http://dash.example.com", False, False),
        ("https://dash.example.com:8443", False, False),
        ("https://a.corp.example", False, True),  # trusted subdomain pattern
        ("https://a.corp.example:444", False, False),
        ("https://corp.example.evil.example", False, False),
        ("null", False, False),
        ("", False, False),
        ("not a url", False, False),
    ],
)
async def test_scheme_host_and_port_all_count(origin: str, secure: bool, opens: bool) -> None:
    assert await _opens(origin, secure=secure) is opens


async def test_a_socket_without_an_origin_is_refused() -> None:
    assert not await _opens(None)


async def test_a_host_outside_allowed_hosts_is_not_its_own_origin(settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    assert not await _opens("http://localhost:8000")


async def test_behind_a_tls_proxy_the_site_origin_is_https(settings: Any) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    forwarded = [(b"x-forwarded-proto", b"https")]
    assert await _opens("https://localhost:8000", extra=forwarded)
    assert not await _opens("http://localhost:8000", extra=forwarded)


@pytest.mark.django_db
async def test_the_application_refuses_a_foreign_port_with_a_valid_session(settings: Any) -> None:
    from rollouts_ui.asgi import application

    settings.ANONYMOUS_READ_ONLY = True  # the consumer itself would accept this socket
    for origin, opens in (("http://localhost:9999", False), ("http://localhost:8000", True)):
        headers = [(b"host", SITE_HOST.encode()), (b"origin", origin.encode())]
        communicator = WebsocketCommunicator(application, "/ws/fleet/", headers=headers)
        connected, _ = await communicator.connect()
        assert connected is opens, origin
        if connected:
            await communicator.disconnect()
