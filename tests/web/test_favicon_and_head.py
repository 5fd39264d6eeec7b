"""``/favicon.ico`` is served (no 404 in every browser's console) and ``HEAD /`` answers like GET."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_the_favicon_is_served_without_login() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(response.streaming_content)  # type: ignore[attr-defined]


def test_pages_link_the_icon(live_bus: Any, reader: Any) -> None:
    client = Client()
    client.force_login(reader)
    assert b'rel="icon"' in client.get("/").content


def test_head_on_the_fleet_page_answers_200_not_405(live_bus: Any, reader: Any) -> None:
    client = Client()
    client.force_login(reader)
    response = client.head("/")
    assert response.status_code == 200
    assert response.content == b""


def test_head_without_login_goes_to_the_login_page_like_get() -> None:
    assert Client().head("/").status_code == 302
