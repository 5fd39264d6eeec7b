from __future__ import annotations

from collections.abc import Iterator

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from dashboard.live.bus import LiveBus, get_bus
from dashboard.web import data

# The action tests' in-process kubesim (cluster "sim") and inline Celery, for the stale-click tests.
from tests.actions.conftest import eager, sim  # noqa: F401

# The browser tests' server, Chromium and signed-in page, for the markup-in-the-browser tests.
from tests.browser.conftest import browser, page, server  # noqa: F401
from tests.web import samples


@pytest.fixture
def live_bus(redis_prefix: str) -> Iterator[LiveBus]:
    with override_settings(LIVE_REDIS_PREFIX=redis_prefix):
        data.reset()
        bus = get_bus()
        async_to_sync(bus.publish_many)(
            [(samples.healthy_canary(), []), (samples.healthy_canary("billing", "payments"), [])]
        )
        yield bus
        data.reset()
