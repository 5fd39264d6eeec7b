"""Websocket ``/ws/actions/<cluster>/<namespace>/<name>/``: live action outcomes for one rollout.

Same rules as the other sockets: anonymous connections are refused with 4401 (unless read-only
anonymous viewing is on), a rollout outside the user's scope with 4403; the Origin check is the ASGI
application's. Each message is ``{"type": "action", "entry": {...}}`` (``live.entry_json``), or
``{"type": "request", "request": id, "state": …}`` when an approval request of the rollout was opened,
voted on or closed — a doorbell: the page fetches ``/api/v1/requests`` again (its per-user part).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

from dashboard.access.rbac import aaccess_for
from dashboard.access.visibility import may_read
from dashboard.actions.live import actions_group


class ActionsConsumer(AsyncWebsocketConsumer):
    group = ""

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        if not may_read(self.user):
            await self.close(code=4401)
            return
        kwargs = self.scope["url_route"]["kwargs"]
        self.key = f"{kwargs['cluster']}/{kwargs['namespace']}/{kwargs['name']}"
        if not (await aaccess_for(self.user)).can("get", self.key):
            await self.close(code=4403)
            return
        self.group = actions_group(self.key)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def action_recorded(self, message: Mapping[str, Any]) -> None:
        # Re-checked per message: a grant revoked while the page is open stops the flow.
        if (await aaccess_for(self.user)).can("get", self.key):
            await self.send(text_data=json.dumps({"type": "action", "entry": message["entry"]}, default=str))

    async def guard_request(self, message: Mapping[str, Any]) -> None:
        if (await aaccess_for(self.user)).can("get", self.key):
            payload = {"type": "request", "request": message["request"], "state": message.get("state")}
            await self.send(text_data=json.dumps(payload))
