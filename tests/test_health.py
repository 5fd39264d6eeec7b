from __future__ import annotations

from typing import Any

import pytest
from django.test import Client


@pytest.fixture(autouse=True)
def own_live_bus(settings: Any, redis_prefix: str) -> None:
    """Readiness reads every watcher's report on the bus: read ours only, never what another test (or an
    earlier run against the same Redis) left under the default prefix."""
    settings.LIVE_REDIS_PREFIX = redis_prefix


@pytest.mark.django_db
def test_healthz_answers_ok(client: Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_each_dependency_to_a_signed_in_user(admin_client: Client) -> None:
    body = admin_client.get("/readyz").json()
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"] == "ok"
    assert body["status"] == "ok"
