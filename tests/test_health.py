from __future__ import annotations

import pytest
from django.test import Client


@pytest.mark.django_db
def test_healthz_answers_ok(client: Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_reports_each_dependency_to_a_signed_in_user(admin_client: Client) -> None:
    body = admin_client.get("/readyz").json()
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"] == "ok"
    assert body["status"] == "ok"
