"""Web test fixtures: a live bus on a private Redis prefix, and logged-in clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from dashboard.live.bus import LiveBus, get_bus
from dashboard.web import data


@pytest.fixture(autouse=True)
def _signed_in_users_view_everything(settings: Any) -> None:
    # Access is deny-by-default (dashboard.access); these tests are about pages, not scopes.
    settings.RBAC_DEFAULT_ROLE = "viewer"


@pytest.fixture
def live_bus(redis_prefix: str) -> Iterator[LiveBus]:
    # Signed-in test users read everything through the built-in viewer role (RBAC denies by default).
    with override_settings(LIVE_REDIS_PREFIX=redis_prefix, RBAC_DEFAULT_ROLE="viewer"):
        data.reset()
        yield get_bus()
        data.reset()


@pytest.fixture
def reader(db: Any) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("reader", password="a-long-test-password")
