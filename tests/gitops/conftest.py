"""Webhook test set-up: three configured repositories and a private rate-limit prefix in Redis."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client, override_settings

from tests.gitops.payloads import REPOSITORIES


@pytest.fixture
def hooks(db: Any, redis_prefix: str) -> Iterator[Client]:
    with override_settings(
        GITOPS_REPOSITORIES=REPOSITORIES, LIVE_REDIS_PREFIX=redis_prefix, ROOT_URLCONF="dashboard.gitops.urls"
    ):
        yield Client(REMOTE_ADDR="192.0.2.10")
