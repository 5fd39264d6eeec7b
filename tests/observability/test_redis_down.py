"""Redis down: login and the database-backed pages work, live pages and the API answer 503 naming the
outage (never 500), ``/api/v1/live-status`` says since when, and all of it recovers by itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from dashboard.live import outage
from dashboard.web import data

pytestmark = pytest.mark.django_db
DEAD_REDIS = "redis://127.0.0.1:1/0"


@pytest.fixture
def redis_down(settings: Any) -> Iterator[Any]:
    working = settings.REDIS_URL
    settings.REDIS_URL = DEAD_REDIS
    data.reset()
    outage.recovered()
    yield settings
    settings.REDIS_URL = working
    data.reset()
    outage.recovered()


def test_login_and_the_fleet_page_work_while_redis_is_down(client: Any, redis_down: Any) -> None:
    User.objects.create_user("ops", password="a-long-password-1")
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    response = client.post("/accounts/login/", {"username": "ops", "password": "a-long-password-1"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert client.get("/audit/").status_code == 200
    assert client.post("/accounts/logout/").status_code in (200, 302)


def test_live_pages_and_the_api_answer_503_naming_the_outage(admin_client: Any, redis_down: Any) -> None:
    api = admin_client.get("/api/v1/rollouts/default/shop/checkout")
    assert api.status_code == 503
    assert api.json()["error"].startswith("live updates are down since ")
    page = admin_client.get("/rollouts/default/shop/checkout/")
    assert page.status_code == 503
    assert b"Live updates are down since" in page.content and b'role="alert"' in page.content
    assert admin_client.get("/api/v1/rollouts").status_code == 503


def test_live_status_says_since_when_and_recovers_by_itself(admin_client: Any, redis_down: Any) -> None:
    down = admin_client.get("/api/v1/live-status").json()
    assert down["bus"]["ok"] is False and down["bus"]["downSince"]
    assert "Connection refused" in down["bus"]["error"] or "connecting" in down["bus"]["error"]
    redis_down.REDIS_URL = os.environ["REDIS_URL"]  # Redis is back
    data.reset()
    up = admin_client.get("/api/v1/live-status").json()
    assert up["bus"] == {"ok": True, "downSince": None, "error": ""}


def test_live_status_needs_a_login(client: Any) -> None:
    assert client.get("/api/v1/live-status").status_code == 401
