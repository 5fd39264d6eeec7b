from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connections

from dashboard.actions.service import rollout_act
from dashboard.actions.timeline import audit_events
from dashboard.web.routing import websocket_urlpatterns
from tests.actions.conftest import make_user
from tests.actions.objects import canary, get, load, seen_of


@pytest.mark.django_db(transaction=True)
async def test_the_outcome_reaches_every_open_page_live(sim: Any, eager: None) -> None:
    user = await sync_to_async(make_user)("olivia", "operator")
    watcher = await sync_to_async(make_user)("walter", "viewer")
    await sync_to_async(load)(sim, canary())
    page = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/actions/sim/shop/checkout/")
    page.scope["user"] = watcher
    assert (await page.connect())[0]
    seen = seen_of(await sync_to_async(get)(sim, "shop", "checkout"))
    await sync_to_async(rollout_act)(user, "abort", "sim/shop/checkout", seen=seen)
    message = await page.receive_json_from(timeout=5)
    assert message["type"] == "action"
    assert (message["entry"]["actor"], message["entry"]["outcome"]) == ("olivia", "done")
    await page.disconnect()
    events = await sync_to_async(audit_events)("sim/shop/checkout")
    assert [e["title"] for e in events] == ["olivia: abort — done"]
    await sync_to_async(connections.close_all)()  # leave no connection in the shared executor thread


def test_installations_sharing_a_redis_do_not_ring_each_others_action_pages(settings: Any) -> None:
    from dashboard.actions.live import actions_group

    settings.LIVE_REDIS_PREFIX = "team-a:"
    ours = actions_group("prod/shop/checkout")
    settings.LIVE_REDIS_PREFIX = "team-b:"
    assert actions_group("prod/shop/checkout") != ours
    assert actions_group("prod/shop/checkout") == actions_group("prod/shop/checkout")
